// Raw firehose tables, one per event type, plus the user directory.
events.EVENT_TYPES.forEach(eventType => {
  declare({
    database: events.SOURCE_PROJECT,
    schema: events.SOURCE_DATASET,
    name: `raw_${eventType.name}`,
    description: `Raw ${eventType.name} events as delivered by the collector.`
  });
});

declare({
  database: "pulse-identity",
  schema: "directory",
  name: "users",
  columns: {
    user_id: "Stable user id",
    plan: "Subscription plan"
  }
});
