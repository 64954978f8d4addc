// The machine-readable line every JS benchmark prints per measure, for
// tests/bench/table.py (benchlib.py reads it): `BENCH measure=… anchor=…
// ours=… unit=… target=… met=yes|no|-[ vs=…]`.
const num = (v) => (v === null || v === undefined ? '-' : Number.isFinite(v) ? String(Number(v.toPrecision(4))) : 'nan');
export const bench = (measure, anchor, ours, unit, target, met, vs) =>
  console.log(`BENCH measure=${measure} anchor=${num(anchor)} ours=${num(ours)} unit=${unit} target=${target} met=${met === null ? '-' : met ? 'yes' : 'no'}${vs ? ` vs=${vs}` : ''}`);
