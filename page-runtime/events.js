// events.js — the events socket's messages as the panel reads them
// (schemas/events.json): one pure function, so the panel's handling of
// what the daemon sends is tested in node against the same vectors as the
// daemon and `sloptimize watch` (schemas/events-vectors.json,
// tests/page-runtime/events.test.mjs).
//
// parseEvent(text) gives the message as an object when the panel can use
// it, and null otherwise: text that is not a JSON object with a string
// type, a type from a newer daemon, or a message missing what the panel
// acts on (a wake's id and line, a record's object, a gap's ids).  A bad
// message is ignored, never thrown at the page.  Fields are not copied or
// renamed: what the daemon adds later passes through.

const ID = /^(0|[1-9][0-9]{0,19}):(0|[1-9][0-9]{0,19})$/;
const RESUME = /^(0|[1-9][0-9]{0,19}):(-1|0|[1-9][0-9]{0,19})$/;

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function parseEvent(text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(m) || typeof m.type !== 'string') return null;
  switch (m.type) {
    case 'hello':
    case 'dropped':
      // every field optional to the panel: a hello without a cursor is
      // still "connected", a dropped without a count still said
      return m;
    case 'gap':
      return typeof m.after === 'string' && typeof m.resume === 'string' && RESUME.test(m.resume) ? m : null;
    case 'wake':
      if (typeof m.id !== 'string' || !ID.test(m.id) || typeof m.line !== 'string') return null;
      return m.record === null || isObject(m.record) ? m : null;
    case 'record':
      return typeof m.id === 'string' && ID.test(m.id) && isObject(m.record) ? m : null;
    default:
      return null;	// a newer daemon's: not ours
  }
}
