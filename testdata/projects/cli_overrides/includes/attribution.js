// Attribution window and the two tuning knobs "a" and "b" come from vars so CI can override them.
function windowDays() {
  return Number(dataform.projectConfig.vars.attribution_window_days);
}

function weights() {
  const vars = dataform.projectConfig.vars;
  return { first: Number(vars.a), last: Number(vars.b) };
}

module.exports = { windowDays, weights };
