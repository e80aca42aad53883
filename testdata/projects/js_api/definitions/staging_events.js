// Generates one deduplicated staging view per event type.
for (const eventType of events.EVENT_TYPES) {
  const columns = ["event_id", "user_id", "event_ts", ...eventType.extraColumns];
  publish(events.stagingName(eventType.name), {
    type: "view",
    description: `Deduplicated ${eventType.name} events.`,
    tags: ["staging", eventType.name],
    assertions: {
      uniqueKey: eventType.keyColumns,
      nonNull: ["event_id", "user_id"]
    }
  }).query(ctx => `
SELECT ${columns.join(", ")}
FROM ${ctx.ref(events.SOURCE_DATASET, `raw_${eventType.name}`)}
WHERE ${events.sinceMinDate("DATE(event_ts)")}
QUALIFY ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_ts) = 1`);
}
