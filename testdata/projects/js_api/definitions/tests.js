// Unit test for the DAU table: fake inputs in, expected rows out.
test("daily_active_users_counts_distinct_users")
  .dataset("daily_active_users")
  .input("sessions", `
    SELECT TIMESTAMP "2024-03-01 10:00:00" AS session_start, "u1" AS user_id UNION ALL
    SELECT TIMESTAMP "2024-03-01 18:00:00", "u1" UNION ALL
    SELECT TIMESTAMP "2024-03-01 09:00:00", "u2"`)
  .input("users", `
    SELECT "u1" AS user_id, "pro" AS plan UNION ALL
    SELECT "u2", "free"`)
  .expect(`
    SELECT DATE "2024-03-01" AS activity_date, "free" AS plan, 1 AS active_users UNION ALL
    SELECT DATE "2024-03-01", "pro", 1`);
