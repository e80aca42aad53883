// Reading query results in JiT code by column name.
//
// jctx.adapter.execute() answers with BigQuery's rows as its REST API sends
// them: each row is {f: [{v: …}, …]}, one cell per column of the response's
// schemaFields, held in a google.protobuf.Struct. The n of
// `SELECT COUNT(*) AS n` is therefore
// rows[0].fields.f.listValue.values[0].structValue.fields.v.stringValue, and
// rows[0].fields.n is undefined. rowsOf(response) turns the rows into plain
// objects by column name ({n: "48213"}): scalars stay the strings BigQuery
// sends (numbers too: use Number()), NULL is null, a RECORD an object and a
// REPEATED column an array.
//
// JiT code cannot call this file: core keeps a JiT function as its source
// text (fn.toString()) and runs it later and elsewhere (the JiT worker of
// `dataform run`, dfd's previews), where includes are not loaded. So
// withRows(fn) returns fn's JiT code with rowsOf's text in front of it,
// made available as jctx.rows:
//
//   .jitCode(jit_rows.withRows(async (jctx) => {
//     const [{ n }] = jctx.rows(await jctx.adapter.execute({ statement: "SELECT COUNT(*) AS n …", fetchResults: true }));
//     …
//   }))

function rowsOf(response) {
  const record = (struct, fields) => {
    const cells = struct.fields.f.listValue.values;
    const out = {};
    fields.forEach((field, i) => {
      out[field.name] = cells[i] ? value(cells[i].structValue.fields.v, field) : null;
    });
    return out;
  };
  const value = (v, field) => {
    switch (v && v.kind) {
      case "stringValue":
        return v.stringValue;
      case "numberValue":
        return v.numberValue;
      case "boolValue":
        return v.boolValue;
      case "structValue": // a RECORD: {f: [{v: …}, …]}
        return record(v.structValue, field.struct ? field.struct.fields : []);
      case "listValue": // a REPEATED column: [{v: …}, …]
        return v.listValue.values.map((item) => value(item.structValue.fields.v, field));
      default:
        return null;
    }
  };
  return (response.rows || []).map((row) => record(row, response.schemaFields || []));
}

function withRows(fn) {
  return `async (jctx) => {
  jctx.rows = ${rowsOf};
  return (${fn})(jctx);
}`;
}

module.exports = { rowsOf, withRows };
