import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { CrashPolicy, DEFAULT_BACKOFF } from "../src/backoff";

describe("crash backoff", () => {
  it("waits 1 s, 2 s, 4 s, 8 s, then gives up at the 5th crash within 3 minutes", () => {
    const p = new CrashPolicy();
    const t0 = 1_000_000;
    assert.deepEqual(p.onCrash(t0), { action: "restart", delayMs: 1000, crashesInWindow: 1 });
    assert.deepEqual(p.onCrash(t0 + 2_000), { action: "restart", delayMs: 2000, crashesInWindow: 2 });
    assert.deepEqual(p.onCrash(t0 + 5_000), { action: "restart", delayMs: 4000, crashesInWindow: 3 });
    assert.deepEqual(p.onCrash(t0 + 10_000), { action: "restart", delayMs: 8000, crashesInWindow: 4 });
    assert.deepEqual(p.onCrash(t0 + 20_000), { action: "giveUp", crashesInWindow: 5 });
  });

  it("forgets crashes older than the window", () => {
    const p = new CrashPolicy();
    for (let i = 0; i < 4; i++) p.onCrash(i * 1000);
    const d = p.onCrash(DEFAULT_BACKOFF.windowMs + 3500);
    assert.deepEqual(d, { action: "restart", delayMs: 1000, crashesInWindow: 1 });
  });

  it("caps the delay", () => {
    const p = new CrashPolicy({ initialDelayMs: 1000, maxDelayMs: 5000, maxCrashes: 100, windowMs: 1e9 });
    let last = 0;
    for (let i = 0; i < 10; i++) {
      const d = p.onCrash(i);
      assert.equal(d.action, "restart");
      if (d.action === "restart") last = d.delayMs;
    }
    assert.equal(last, 5000);
  });

  it("starts afresh after reset (a restart the user asked for)", () => {
    const p = new CrashPolicy();
    for (let i = 0; i < 4; i++) p.onCrash(i);
    p.reset();
    assert.deepEqual(p.onCrash(10), { action: "restart", delayMs: 1000, crashesInWindow: 1 });
  });
});
