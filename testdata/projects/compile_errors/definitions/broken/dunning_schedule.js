// ERROR (intended): JavaScript syntax error — missing closing parenthesis.
const reminderDays = [3, 7, 14];

publish("dunning_schedule", { type: "view" })
  .query(ctx => `SELECT day FROM UNNEST([${reminderDays.join(", ")}]) AS day`;
