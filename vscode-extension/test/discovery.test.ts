import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { bundledBinaryPath, discoverServer, INSTALL_URL, lookPath, resolveConfiguredPath } from "../src/discovery";

let tmp: string;

function exe(p: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, "#!/bin/sh\nexit 0\n");
  fs.chmodSync(p, mode);
  return p;
}

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "dfd-discovery-")));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("server discovery", () => {
  const base = () => ({
    extensionPath: path.join(tmp, "ext"),
    configuredPath: "",
    workspaceFolders: [path.join(tmp, "ws")],
    envPath: "",
    platform: "linux" as NodeJS.Platform,
    arch: "x64",
    homeDir: path.join(tmp, "home"),
  });

  it("uses the bundled linux-x64 binary when present", () => {
    const b = exe(path.join(tmp, "ext", "bin", "linux-x64", "dfd"));
    exe(path.join(tmp, "path1", "dfd"));
    const r = discoverServer({ ...base(), envPath: path.join(tmp, "path1") });
    assert.deepEqual(r.ok && [r.source, r.command], ["bundled", b]);
  });

  it("ignores the bundled binary on other platforms and falls back to PATH", () => {
    exe(path.join(tmp, "ext", "bin", "linux-x64", "dfd"));
    const onPath = exe(path.join(tmp, "path1", "dfd"));
    const r = discoverServer({ ...base(), platform: "darwin", arch: "arm64", envPath: path.join(tmp, "path1") });
    assert.deepEqual(r.ok && [r.source, r.command], ["path", onPath]);
    assert.equal(bundledBinaryPath("/x", "aix", "ppc64"), undefined);
    assert.equal(bundledBinaryPath("/x", "linux", "ia32"), undefined);
    assert.equal(bundledBinaryPath("/x", "linux", "x64"), path.join("/x", "bin", "linux-x64", "dfd"));
  });

  it("looks for each platform .vsix's own binary", () => {
    const b = exe(path.join(tmp, "ext", "bin", "darwin-arm64", "dfd"));
    const r = discoverServer({ ...base(), platform: "darwin", arch: "arm64", envPath: "" });
    assert.deepEqual(r.ok && [r.source, r.command], ["bundled", b]);
    assert.equal(bundledBinaryPath("/x", "win32", "x64"), path.join("/x", "bin", "win32-x64", "dfd.exe"));
    assert.equal(bundledBinaryPath("/x", "linux", "arm64"), path.join("/x", "bin", "linux-arm64", "dfd"));
  });

  it("falls back to PATH when the bundled binary is absent or not executable", () => {
    exe(path.join(tmp, "ext", "bin", "linux-x64", "dfd"), 0o644);
    const onPath = exe(path.join(tmp, "b", "dfd"));
    fs.mkdirSync(path.join(tmp, "a"));
    const r = discoverServer({ ...base(), envPath: [path.join(tmp, "a"), "", path.join(tmp, "b")].join(path.delimiter) });
    assert.deepEqual(r.ok && [r.source, r.command], ["path", onPath]);
  });

  it("skips non-executable and directory candidates on PATH", () => {
    exe(path.join(tmp, "a", "dfd"), 0o644);
    fs.mkdirSync(path.join(tmp, "b", "dfd"), { recursive: true });
    const good = exe(path.join(tmp, "c", "dfd"));
    assert.equal(lookPath("dfd", ["a", "b", "c"].map((d) => path.join(tmp, d)).join(path.delimiter)), good);
    assert.equal(lookPath("dfd", ""), undefined);
  });

  it("prefers dfd.path over the bundled binary", () => {
    exe(path.join(tmp, "ext", "bin", "linux-x64", "dfd"));
    const mine = exe(path.join(tmp, "mine", "dfd"));
    const r = discoverServer({ ...base(), configuredPath: mine });
    assert.deepEqual(r.ok && [r.source, r.command], ["setting", mine]);
  });

  it("reports a configured path that does not exist, without falling back", () => {
    exe(path.join(tmp, "path1", "dfd"));
    const r = discoverServer({ ...base(), configuredPath: "/nonexistent/dfd", envPath: path.join(tmp, "path1") });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, "setting-missing");
    assert.match(!r.ok ? r.message : "", /dfd\.path.*"\/nonexistent\/dfd".*does not exist/);
  });

  it("reports a configured path that is not executable", () => {
    const p = exe(path.join(tmp, "dfd"), 0o644);
    const r = discoverServer({ ...base(), configuredPath: p });
    assert.equal(!r.ok && r.reason, "setting-not-executable");
    assert.match(!r.ok ? r.message : "", /not executable/);
  });

  it("reports a configured path that is a directory", () => {
    fs.mkdirSync(path.join(tmp, "dir"));
    const r = discoverServer({ ...base(), configuredPath: path.join(tmp, "dir") });
    assert.equal(!r.ok && r.reason, "setting-directory");
  });

  it("resolves a relative dfd.path against the first workspace folder", () => {
    const p = exe(path.join(tmp, "ws", "tools", "dfd"));
    const r = discoverServer({ ...base(), configuredPath: "tools/dfd" });
    assert.deepEqual(r.ok && [r.source, r.command], ["setting", p]);
    const missing = discoverServer({ ...base(), configuredPath: "./nope/dfd" });
    assert.match(!missing.ok ? missing.message : "", new RegExp(`\\(${path.join(tmp, "ws", "nope", "dfd")}\\)`));
  });

  it("expands ~/ in dfd.path", () => {
    const p = exe(path.join(tmp, "home", "bin", "dfd"));
    const r = discoverServer({ ...base(), configuredPath: "~/bin/dfd" });
    assert.deepEqual(r.ok && [r.source, r.command], ["setting", p]);
    assert.equal(resolveConfiguredPath("~", [], "/h"), "/h");
    assert.equal(resolveConfiguredPath("  /abs/dfd  ", ["/ws"], "/h"), "/abs/dfd");
  });

  it("returns a message when nothing is found", () => {
    const r = discoverServer({ ...base(), envPath: path.join(tmp, "empty") });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, "not-found");
    assert.match(!r.ok ? r.message : "", /dfd language server was not found/);
    assert.match(!r.ok ? r.message : "", /dfd\.path/);
    assert.match(!r.ok ? r.message : "", /PATH/);
    assert.equal(INSTALL_URL, "https://github.com/dfdtools/dfd#install");
  });
});
