import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { takesServerTokens } from "../src/highlighting";

describe("semantic tokens in VS Code", () => {
  it("come from dfd for SQLX only: TypeScript's own rule .js files", () => {
    assert.equal(takesServerTokens("sqlx"), true);
    for (const id of ["javascript", "yaml", "json", "plaintext"]) {
      assert.equal(takesServerTokens(id), false, id);
    }
  });
});
