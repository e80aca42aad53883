// Valid JS action; the duplicate below collides with it.
publish("invoices", { type: "table", tags: ["billing"] })
  .query(ctx => `SELECT subscription_id, plan, CURRENT_DATE() AS invoice_date FROM ${ctx.ref("subscriptions")}`);
