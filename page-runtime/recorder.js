//# allFunctionsCalledOnLoad
// recorder.js — the in-page flight recorder (seed §3, DESIGN §5–§6, §12).
//
//   import { createRecorder } from '/page-runtime/recorder.js';
//   const rec = createRecorder({ renderer, build: 'v42', context: () => ({ view }) });
//   rec.setPhase('play');
//   rec.track('unit', () => player.position);
//   rec.track('camera', () => camera.position, { follows: 'unit', reach: () => boom });
//
// It wraps renderer.render to sample every frame into a fixed ring (600
// frames), and makes the records the daemon folds: heartbeats every 2 s,
// hitches (long frames, classified), usermarks (Ctrl+F11: "this felt
// wrong"), jitter (the motion monitor, motion.js).  Each incident carries
// its footprint, minted here with the same code the fold reads it with
// (fold.js).  Records go to POST {endpoint}/api/sloptimize/records in
// order, batched, retried while the daemon is down (delivery.js).
//
// The steady path — one frame with nothing to report — writes numbers into
// typed arrays and allocates nothing: no closures, no strings, no objects.
// A frame is every render call between two animation frames (a composer's
// passes are one frame), closed when the next frame's first render starts
// — or, when it is already longer than the hitch threshold at the end of a
// render call, at the end of the task that rendered it (a microtask), so a
// stall that delays the next animation frame does not delay its report.
// Everything that builds objects or walks the scene runs in a task after
// the frame (the census, hitch and jitter records) or on timers
// (heartbeats, the situation): the frame itself only writes numbers and,
// when there is something to say, queues that task.
//
// What it does not do (seed §3.4): no JS stack sampling, no heap
// snapshots, no network waterfall.  docs/recorder.md says what is measured.
import { canonicalContext, footprintKey, footprintId, scriptField, FOOTPRINT_VERSION } from './footprint.js';
import {
  FrameRing, FLAG_PAUSED, FLAG_RESIZE, FLAG_PANEL, RING_FRAMES, VIEW_BEFORE, classifyFrame, RateLimit, loafSettled, loafOverlaps,
} from './frames.js';
import { MotionMonitor } from './motion.js';
import { Outbox } from './delivery.js';
import { offThreadFetch } from './sender.js';
import { textureBytes } from './census.js';
import { entityId, ownUrl, pageIdentity, SITE_UNKNOWN } from './identity.js';

export { canonicalContext, textureBytes };

const REGISTRY = Symbol.for('sloptimize.recorder');
const ANIM_CHECK = 32;            // the animation frame's time is read from the timeline one frame in this many, if ours agrees
const MEDIAN_YOUNG = 60;          // below this many frames in the ring, the rolling median is remade each frame
const MAX_SCENES = 4;             // distinct scenes rendered in one frame, kept for the census
const MAX_NAMES = 32;             // names listed in world.spawned / removed
const MAX_MINTED = 16;
const LOAF_WAIT_MS = 250;         // the least a long-script hitch waits for its LoAF entry
const LOAF_WAIT_MAX_MS = 3000;    // the most (a page at 1 fps: four frames would be 4 s)
const LOAF_WAIT_FRAMES = 4;       // otherwise: this many frame times (the hitch's or the median, the longer)
const WARM_FRAMES = 30;           // no relative judgement before the ring holds this many frames (since a resize)
const PHASE_DEFAULT = 'unset';    // the phase when the game set none: said, not left out
const LOAF_MIN_MS = 50;           // the browser reports no shorter animation frame
const LOAF_FRAMES = 3;            // frames after a hitch's by which the browser has made its entry, if any
const WAKE_MS = 100;              // a hitch this long wakes the agent (DESIGN §9's default)
const CONFIRM_MS = 2500;
// The census walks at most this long per task (a big scene takes
// several).  Not more: on this project's machine (docs/performance.md) a
// task of half a millisecond's work passes 1 ms about one time in a
// hundred, one of a quarter never did.
const CENSUS_SLICE_MS = 0.25;
// Naming a census's finds (an entity id and the site its stack says:
// formatting a stack is some tens of microseconds, and a crowd's census
// names dozens) goes on at most this long per task.
const NAME_SLICE_MS = 0.25;
// …but at least this many objects: a slice is bounded by its work, not by
// the wall clock alone — on a loaded machine a preempted task's 0.25 ms of
// wall time is a handful of objects, and a census of a small scene spread
// over several frames cannot say which of them drew what it found
const CENSUS_SLICE_MIN = 256;
// A waking hitch's census at its frame's end walks at most this many
// objects (~0.1 ms a thousand in node, ~0.2 on a loaded machine): a
// count, not the clock — on a loaded machine the clock also counts the
// time the thread was taken away, and a small scene's wake would wait
// for the stall.  A bigger scene's walk goes on in the after-frame slices.
const WAKE_WALK_MAX = 2048;
const MAX_WORK = 16;              // frames waiting for the after-frame task (more: the oldest census-only go)
// this.fr: the per-frame doubles (a double in an object field or an
// argument can cost a heap number per store or call)
const FR_END = 0, FR_PREV_END = 1, FR_INSIDE = 2, FR_MEDIAN = 3, FR_ABS = 4, FR_SELF = 5, FR_BASE_END = 6, FR_TICK_AT = 7,
  FR_ANIM = 8, FR_PREV_ANIM = 9;
// this.own: the recorder's own main-thread time: a task's start, the
// total of its tasks, the longest task, tasks, the kind of the task under
// way and of the longest (OWN_KINDS: numbers, so naming it allocates
// nothing), the render wrapper's own time (every frame's few
// microseconds, in the game's render call: no task of its own), and the
// time its tasks were timed running (the total less what was put on its
// books after it was spent: the identity's add())
const OWN_START = 0, OWN_TOTAL = 1, OWN_MAX = 2, OWN_TASKS = 3, OWN_KIND = 4, OWN_MAX_KIND = 5, OWN_RENDER = 6, OWN_TIMED = 7;
const K_OTHER = 0, K_FRAME = 1, K_LOAF = 2, K_SECOND = 3, K_BEAT = 4, K_FIRST_CENSUS = 5, K_PENDING = 6, K_SEND = 7,
  K_SEAL = 8, K_ANSWER = 9, K_SNAPSHOT = 10, K_CLOSE = 11, K_ADD = 12, K_CENSUS_END = 13, K_RECORD = 14, K_NAMES = 15,
  K_RECORD_END = 16;
const OWN_KINDS = ['other', 'after-frame (a census slice)', 'long-animation-frame observer', 'every-second (context)',
  'heartbeat', 'first census', 'waiting long script (LoAF deadline)', 'outbox send (mostly the fetch() call, or handing the batch to its worker)',
  'outbox send (mostly sealing: JSON.stringify of the batch)', 'outbox answer (the daemon\'s reply handled)',
  'view snapshot send', 'a waking hitch made at its frame\'s end (in the game\'s task)',
  'add() of the page\'s identity (a stack captured for each object the game added, in its task)',
  'after-frame (a census\'s end: its finds sorted)', 'after-frame (a hitch\'s record: its facts and verdict)',
  'after-frame (a census\'s finds named: an id and a site each)',
  'after-frame (a hitch\'s record: its view, script and footprint)'];
// the outbox's parts of its own time (delivery.js, onOwn)
const OUTBOX_KIND = { seal: K_SEAL, fetch: K_SEND, answer: K_ANSWER };
// work for the after-frame task, per queued frame
// (W_COVERED: a census has covered the frame, its finds given; the hitch's
// record waits for a task of its own — RECORDS_PER_TASK)
const W_CENSUS = 1, W_HITCH = 2, W_COVERED = 4;
// An after-frame task makes at most this many hitch records: a record is
// 0.1–0.5 ms of code that runs a few times a session (V8's interpreter),
// and a stall of several hitch frames made them all in one task, past
// 1 ms.  The rest follow, one a task, before any census begins.
const RECORDS_PER_TASK = 1;
const CAM = 7;                    // camera position xyz + quaternion xyzw, per queued hitch
const NO_CENSUS = Object.freeze({ spawned: Object.freeze([]), spawnedCount: 0, removed: Object.freeze([]), removedCount: 0,
  minted: Object.freeze([]), mintedCount: 0, spawnedEntities: Object.freeze([]), mintedIds: Object.freeze({}) });

const r1 = (v) => Math.round(v * 10) / 10;
// The hitch limit's key: the verdict, and for a long script the script
// (footprint v2's cause): one record a second per cause, so a second
// script that runs long within a second of another is still recorded.
const limitKey = (cls, f) => (cls[0].guess === 'long-script' ? `long-script|${scriptField(f)}` : cls[0].guess);
const now = () => performance.now();
// A record's ISO time, written by hand: toISOString() on a new Date costs
// 10–40 µs cold in the page beside a software renderer or on a loaded
// machine (a record's path runs cold; docs/performance.md), the arithmetic
// below about half.  The date part is made once a day.  The same
// string as toISOString() for any time after 1970 (the unit test compares).
let isoDay = NaN, isoPrefix = '';
const pad2 = (n) => (n < 10 ? '0' : '') + n;
export function isoTime(ms) {
  ms = Math.floor(ms);
  const day = Math.floor(ms / 86400000);
  if (day !== isoDay) {
    const s = new Date(day * 86400000).toISOString();
    isoDay = day;
    isoPrefix = s.slice(0, s.indexOf('T') + 1);
  }
  let r = ms - day * 86400000;
  const h = Math.floor(r / 3600000); r -= h * 3600000;
  const m = Math.floor(r / 60000); r -= m * 60000;
  const sec = Math.floor(r / 1000), f = r - sec * 1000;
  return `${isoPrefix}${pad2(h)}:${pad2(m)}:${pad2(sec)}.${f < 10 ? '00' : f < 100 ? '0' : ''}${f}Z`;
}
const isoAt = (t) => isoTime(performance.timeOrigin + t);

function parseChord(s) {
  const parts = String(s).split('+').map((p) => p.trim()).filter(Boolean);
  const key = parts.pop() || '';
  const mods = new Set(parts.map((p) => p.toLowerCase()));
  return { key: key.toLowerCase(), ctrl: mods.has('control') || mods.has('ctrl'), alt: mods.has('alt'),
    shift: mods.has('shift'), meta: mods.has('meta') || mods.has('cmd') };
}

function chordMatches(c, e) {
  return String(e.key).toLowerCase() === c.key && e.ctrlKey === c.ctrl && e.altKey === c.alt &&
    e.shiftKey === c.shift && e.metaKey === c.meta;
}

const objName = (o) => o.name || `${o.type || 'Object3D'}#${o.id}`;
const matName = (m) => m.name || `${m.type || 'Material'}#${m.id}`;
// A stable site (footprint v2, docs/footprint-v2.md): the material's type
// and name, and the object's name path — up to three named levels under
// the scene, an unnamed object by its type.  Never a runtime id.
function objPath(o) {
  let path = o.name || o.type || 'Object3D';
  let p = o.parent, levels = 1;
  while (p && !p.isScene && levels < 3) {
    if (p.name) { path = `${p.name}/${path}`; levels++; }
    p = p.parent;
  }
  return path;
}
const siteOf = (m, o) => `${m.type || 'Material'}${m.name ? `:${m.name}` : ''}@${objPath(o)}`;

// The entity an object belongs to and where the source built it
// (identity.js, docs/attribute.md): {id, site}.  Without the page's
// identity (a recorder outside the dev page) the id is still resolved;
// the site is unknown.
function entityOf(o, cache) {
  const idn = pageIdentity();
  const e = idn ? idn.entityId(o, cache) : entityId(o, { cache });
  return { id: e.id, site: idn ? idn.siteOf(e.root) : SITE_UNKNOWN };
}

// The sites a hitch is keyed by (footprint v2): those of what its verdict
// names — the materials whose program is new for a compile, whose
// texture is new for an upload, the objects first drawn for a spawn —
// else every site the census found.
function sitesFor(finds, guess) {
  const by = finds.sitesBy && finds.sitesBy[guess];
  return by && by.length ? by : finds.sites || [];
}

// The sites of an upload that carry its cost: those whose bytes are at
// least half the largest's.  A 4096² atlas and a label sprite's 256×64
// canvas that three happened to upload in the same frame are the atlas's
// hitch; after a reload the sprite may land a frame earlier or later, and
// the cause must not change with it (footprint v2).
function dominant(bySite) {
  let max = 0;
  for (const n of bySite.values()) if (n > max) max = n;
  const out = new Set();
  for (const [site, n] of bySite) if (n * 2 >= max) out.add(site);
  return out;
}

// The finds of two censuses in a row, as one (a census that walked while
// frames came goes with the next one: runWork).
function mergeFinds(a, b) {
  const cat = (x, y, max) => (x.length === 0 ? y : y.length === 0 ? x : [...new Set([...x, ...y])].sort().slice(0, max));
  const list = (x, y, max) => (x.length === 0 ? y : y.length === 0 ? x : [...x, ...y].slice(0, max));
  return { spawned: list(a.spawned, b.spawned, MAX_NAMES), spawnedCount: a.spawnedCount + b.spawnedCount,
    removed: list(a.removed, b.removed, MAX_NAMES), removedCount: a.removedCount + b.removedCount,
    minted: cat(a.minted, b.minted, MAX_MINTED), mintedCount: a.mintedCount + b.mintedCount,
    spawnedEntities: list(a.spawnedEntities, b.spawnedEntities, MAX_NAMES), mintedIds: { ...a.mintedIds, ...b.mintedIds },
    sites: cat(a.sites, b.sites, MAX_MINTED), uploadBytes: a.uploadBytes + b.uploadBytes,
    programs: a.programs + b.programs, textures: a.textures + b.textures,
    sitesBy: a.sitesBy && b.sitesBy ? Object.fromEntries(Object.keys(a.sitesBy).map((k) => [k, cat(a.sitesBy[k], b.sitesBy[k], MAX_MINTED)]))
      : a.sitesBy || b.sitesBy };
}

// three writes an object's modelViewMatrix each time it draws it (and
// for a shadow map); one never drawn keeps the identity it was made with.
// Without the matrix (not three's object) it cannot be told: drawn.
function neverDrawn(o) {
  const m = o.modelViewMatrix;
  const e = m && m.elements;
  if (!e || e.length !== 16) return false;
  return e[0] === 1 && e[5] === 1 && e[10] === 1 && e[15] === 1 && e[12] === 0 && e[13] === 0 && e[14] === 0 &&
    e[1] === 0 && e[2] === 0 && e[4] === 0 && e[6] === 0 && e[8] === 0 && e[9] === 0 && e[3] === 0 && e[7] === 0 && e[11] === 0;
}

const TEXTURE_SLOTS = ['map', 'normalMap', 'roughnessMap', 'metalnessMap', 'emissiveMap', 'aoMap', 'alphaMap',
  'bumpMap', 'envMap', 'lightMap', 'displacementMap', 'specularMap', 'gradientMap', 'matcap'];

// What a WebGPURenderer's counters are, said in the page's console, the
// recorder's state (the panel) and every heartbeat of it.
const WEBGPU_MEASURED = 'WebGPU: render.calls is the draw count three reports for the frame (info.render.drawCalls), ' +
  'memory.programs is not measured, and time inside render() is the CPU\'s submit, not the GPU\'s work';

class Recorder {
  constructor(opts = {}) {
    const { renderer, endpoint = '', build, budgetFrameMs = 16.7, context, usermarkKey = 'Control+F11',
      heartbeatMs = 2000, spawnBurst = 50, ownSample = 8, confirm = true, motion = {}, fetch: fetchFn, loafWaitMs = LOAF_WAIT_MS,
      trackCamera = true, askNote = true, phase = PHASE_DEFAULT } = opts;
    const born = now();
    if (!renderer || typeof renderer.render !== 'function')
      throw new TypeError('createRecorder: `renderer` must be a THREE.WebGLRenderer (it has no render())');
    this.renderer = renderer;
    this.canvas = renderer.domElement && typeof renderer.domElement.width === 'number' ? renderer.domElement : null;
    this.build = build === undefined || build === null || build === '' ? undefined : String(build);
    this.budgetFrameMs = Number(budgetFrameMs) > 0 ? Number(budgetFrameMs) : 16.7;
    this.context = typeof context === 'function' ? context : null;
    this.chord = parseChord(usermarkKey);
    this.heartbeatMs = heartbeatMs;
    this.loafWaitMs = Math.max(0, Number(loafWaitMs) || 0);
    this.askNote = askNote;
    this.spawnBurst = spawnBurst;
    this.confirmOn = confirm;
    this.endpoint = String(endpoint || '').replace(/\/+$/, '');
    // the game did not say: the records say 'unset' rather than nothing
    this.phase = phase === undefined || phase === null || phase === '' ? undefined : String(phase);
    this.ctx = '';
    this.recording = true;

    this.ring = new FrameRing(RING_FRAMES);
    this.times = new Float64Array(4);   // the render call under way: start, end; the wrapper's start, own time then
    // the wrapper times itself on one render in ownSample (at random: a
    // draw of the generator below ownPick, of 2³⁰)
    this.ownSample = ownSample >= 1 ? Math.floor(ownSample) : 1;
    this.ownPick = Math.floor(0x40000000 / this.ownSample);
    this.ownRnd = 0x2545f49;
    // the per-frame doubles live in a typed array: a double stored in an
    // object's field can cost a fresh heap number per store
    this.fr = new Float64Array(10);     // FR_END … FR_TICK_AT, FR_ANIM, FR_PREV_ANIM
    this.fr[FR_END] = NaN; this.fr[FR_PREV_END] = NaN; this.fr[FR_MEDIAN] = NaN;
    this.fr[FR_ANIM] = NaN; this.fr[FR_PREV_ANIM] = NaN;
    // The animation frame's time (document.timeline.currentTime: in a
    // requestAnimationFrame callback it is the callback's timestamp), the
    // clock a game steps its simulation on — the motion monitor's clock.
    // Render ends are not: on a loaded machine one render ends late and the
    // next early while the game stepped evenly, and the prediction from
    // render ends overshoots, then undershoots — a reversed "jump" of a
    // fraction of a unit that is only the clocks disagreeing.
    this.timeline = typeof document !== 'undefined' && document.timeline ? document.timeline : null;
    this.tickIsAnim = false;            // our callback's time was the timeline's at the last check (openFrame)
    this.animCheck = 0;                 // frames to the next check
    this.fr[FR_BASE_END] = -Infinity;   // the median is over frames that ended after this (a resize re-bases it)
    this.own = new Float64Array(8);     // the recorder's own time: OWN_START … OWN_TIMED
    this.ownAtBeat = 0; this.renderAtBeat = 0;   // own[OWN_TOTAL], own[OWN_RENDER] at the last heartbeat
    this.ownDepth = 0;
    // its tasks of 1 ms or more (the target is none): how many, and the
    // last few with their kind and the frame they ran after (an object
    // each, made only for such a task)
    this.ownLong = 0;
    // per kind of task: how many, their ms, the longest, how many ≥ 1 ms
    this.ownKinds = new Float64Array(OWN_KINDS.length * 4);
    this.ownLongLast = [];
    this.deferredWakes = 0;       // waking hitches whose census was too big to finish at their frame's end (closeSoon)
    // the page's identity (identity.js), whose add() wrapper's time is
    // counted as the recorder's own, per frame (closeFrame); looked for
    // again each second until there is one
    this.identity = pageIdentity();
    this.addMsSeen = this.identity !== null ? this.identity.addMs : 0;
    this.baseFrame = 0;                 // the frame the median's level starts from (0, or a resize)
    this.canvasW = -1; this.canvasH = -1; this.prevW = 0; this.prevH = 0;
    this.curResize = false;
    this.panelOpen = false; this.panelWasOpen = false; this.curPanel = false;
    this.panelFrames = 0;               // frames held because the panel was open, not yet said on a heartbeat
    this.panelFramesTotal = 0;
    this.autoCam = trackCamera ? -1 : -2;   // the index of the automatic camera track (-1: not made yet; -2: off)
    this.autoCamObj = null;
    this.camFilled = false;
    this.camRinged = false;
    this.fr[FR_ABS] = 1.5 * this.budgetFrameMs;   // the hitch rule's absolute guard
    this.frameNo = 0;
    this.tick = 0;
    this.frameTick = -1;          // the tick of the open frame
    this.frameOpen = false;
    this.closeQueued = false;     // a long frame's close is queued as a microtask
    this.curCalls = 0; this.curTriangles = 0; this.curPoints = 0; this.curLines = 0;
    this.curPaused = false;
    this.wasHidden = false;
    this.memGeometries = 0; this.memTextures = 0; this.memPrograms = 0;     // absolute, at the last render
    this.prevGeometries = 0; this.prevTextures = 0; this.prevPrograms = 0;  // at the previous frame's close
    this.prevCalls = 0;
    this.scenes = new Array(MAX_SCENES).fill(null);
    this.nScenes = 0;
    this.camera = null;
    // the scenes of the last closed frame: what the census walks
    this.censusScenes = new Array(MAX_SCENES).fill(null);
    this.nCensusScenes = 0;
    // frames waiting for the after-frame task: slot, what they want, and a
    // hitch's camera as it was in its frame
    this.workSlot = new Int32Array(MAX_WORK);
    this.workKind = new Int32Array(MAX_WORK);
    this.workCam = new Float64Array(MAX_WORK * CAM);
    this.workHasCam = new Int32Array(MAX_WORK);
    this.nWork = 0;
    this.workQueued = false;

    // what the census has seen: programs, uploaded textures (objects carry
    // a generation stamp, census())
    this.seenPrograms = new WeakSet();
    this.seenTextures = new WeakSet();
    this.cs = { gen: 0, stamp: new WeakMap(), known: new WeakMap(),
      memo: { m: null, parent: null, name: '', compiled: false, uploaded: false, fresh: false }, cur: [], prev: [], nCur: 0, nPrev: 0, stack: [], nStack: 0,
      running: false, done: false, mint: false, props: null, spawned: null, spawnedCount: 0, minted: null, sites: null,
      spawnedObjs: null, mintedObjs: null, newTextures: null, newPrograms: null, uploadBytes: 0 };
    this.carry = null;            // a census's finds that no queued frame took yet (workFor)
    this.coveredFinds = null;     // {frame, finds}: a covered hitch's finds, its record waiting (makeCovered)
    this.ended = null;            // a census ended in the last task, its records not made yet (runWork)
    this.finishing = [];          // records whose second half waits for a task (finishRecord)
    // what the last two censuses found in the frames they were for (the
    // frame after one may be its stall, and the census of that stall
    // comes after it: findsOf)
    this.lastFinds = null;
    this.olderFinds = null;
    this.visitor = null;
    this.censuses = 0;            // for frames (the heartbeat's are not counted)
    this.censused = false;        // the first census is queued
    this.censusDone = false;      // the first census ran (it only marks what it sees as seen)

    this.hitchLimit = new RateLimit({ intervalMs: 1000, sessionCap: 500 });
    this.drops = { hitch: 0, jitter: 0, delivery: 0 };   // not yet said on a record
    this.dropTotals = {};
    this.made = { heartbeat: 0, hitch: 0, usermark: 0, jitter: 0 };
    this.incidents = [];          // the last few, for the panel's Current Session tab
    this.pending = [];            // long-script hitches waiting for a LoAF entry
    this.loafDue = 0;             // the frame whose close looks at them again (0: none waits)
    this.pendingTimer = null;
    this.loafs = [];
    this.keysHeld = new Set();
    this.heapMb = NaN;
    this.heapDropMb = 0;
    this.listeners = new Set();

    // jitter records are made after the frame, like hitches
    this.motion = new MotionMonitor({ ...motion, onRecord: (rec, t) => this.onJitter(rec, t), deferred: true,
      onPending: () => this.queueWork() });
    this.trackGet = [];
    this.trackReach = [];
    this.pos = new Float64Array(0);
    this.reach = new Float64Array(0);
    // the host's hold/cut for the next frame, per track (1 = this one);
    // holdAll/cutAll for every track.  Flags, not sets: look input can
    // hold the camera on every frame
    this.holdFlag = new Uint8Array(0);
    this.cutFlag = new Uint8Array(0);
    this.holdAll = false; this.cutAll = false; this.anyHold = false;
    this.hasReach = false;

    // the page's fetch costs the calling task its synchronous part (the
    // recorder's longest task of its own): records and snapshots go from
    // a worker where the page allows one (sender.js), a host's own fetch
    // as it is
    const pageFetch = typeof fetch === 'function' ? fetch.bind(globalThis) : null;
    this.fetch = fetchFn || (pageFetch && offThreadFetch({ fallback: pageFetch }));
    this.snapshots = { sent: 0, failed: 0, lastError: null };
    this.outbox = new Outbox({ endpoint: this.endpoint, fetch: this.fetch || undefined, onChange: () => this.changed(),
      onOwn: (ms, part) => this.ownAdd(ms, OUTBOX_KIND[part] ?? K_SEND) });
    // a WebGPURenderer's info counts differently (render.calls counts
    // render passes, not draws; there is no program list): say so, and
    // never hand those counters on as if they were WebGL's
    this.kind = renderer.isWebGPURenderer ? 'webgpu' : 'webgl';
    if (this.kind === 'webgpu' && typeof console !== 'undefined') console.info(`sloptimize: ${WEBGPU_MEASURED}`);
    this.regime = this.detectRegime();
    this.loafSupported = typeof PerformanceObserver !== 'undefined' &&
      (PerformanceObserver.supportedEntryTypes || []).includes('long-animation-frame');

    this.install();
    // what it cost the game's load (in the game's task, not one of its own)
    this.loadMs = now() - born;
  }

  // --- wiring ---------------------------------------------------------------

  install() {
    const self = this;
    const original = this.renderer.render;
    this.original = original;
    // the wrapper: everything per frame happens in onRenderStart/End
    this.wrapper = function recordedRender(scene, camera) {
      // call, not apply(arguments): an arguments object per frame otherwise
      if (!self.recording) return original.call(this, scene, camera);
      // times in a typed array: a double passed to a call would be boxed
      const times = self.times, own = self.own;
      // The wrapper's own time is the recorder's too (a frame's close, its
      // counters): all of it but the game's render, less a task of its own
      // timed in it (the first census).  Timed on one render in ownSample,
      // picked at random (a composer's passes alternate: every n-th would
      // always be the same pass) and counted ownSample times: its two
      // clock reads cost ~4 µs a frame with the caches cold, a tenth of
      // what they time (docs/performance.md).  (30 bits: a small integer,
      // never a heap number.)
      const r = self.ownRnd = (Math.imul(self.ownRnd, 1664525) + 1013904223) & 0x3fffffff;
      const timed = r < self.ownPick;
      if (timed) { times[2] = performance.now(); times[3] = own[OWN_TIMED]; }
      self.onRenderStart(scene, camera);
      times[0] = performance.now();
      try {
        return original.call(this, scene, camera);
      } finally {
        times[1] = performance.now();
        self.onRenderEnd();
        if (timed) own[OWN_RENDER] += self.ownSample * (performance.now() - times[2] - (times[1] - times[0]) - (own[OWN_TIMED] - times[3]));
      }
    };
    this.renderer.render = this.wrapper;
    // made once: a closure made per frame would be an allocation per frame
    this.closeSoon = function closeSoon() {
      self.closeQueued = false;
      if (!self.recording || !self.frameOpen) return;
      self.closeFrame();
      // only a hitch wakes anyone: a long frame judged none (a young
      // level's whose resources did not move: the first frames of a load)
      // leaves its census to the after-frame slices, as any frame does —
      // walked here it cost the game's task 0.1–1.3 ms in most loads
      // of chart-preview, for no wake (docs/performance.md)
      let waking = false;
      for (let i = 0; i < self.nWork; i++) if ((self.workKind[i] & W_HITCH) !== 0) waking = true;
      if (!waking && self.pending.length === 0) return;
      // what follows is the recorder's own time (a waking hitch's census
      // and record), counted with the rest of it; it runs in the game's
      // task, not one of its own
      self.ownBegin(K_CLOSE);
      // The hitch (it wakes the agent: onRenderEnd) is made and sent now,
      // at the end of its own task, not in a task after it: the stall
      // that made it often goes on after render returns (the browser's
      // rendering update waits for the GPU process), and a task queued now
      // would run only then — hundreds of milliseconds later.  But only
      // while its census is small (WAKE_WALK_MAX objects): a scene of tens
      // of thousands takes milliseconds to walk, and the recorder is never
      // the long task — that census goes on in after-frame slices and the
      // wake waits for it (counted: state().own.deferredWakes).
      if (waking) {
        self.runWork(Infinity, WAKE_WALK_MAX, false);
        // (the frame just closed is the last queued, if it is queued)
        const last = self.nWork - 1;
        if (last >= 0 && (self.workKind[last] & W_HITCH) !== 0 && self.ring.frame[self.workSlot[last]] === self.frameNo) self.deferredWakes++;
      }
      // a long-script hitch waiting for its script: look each frame at
      // what the browser has made since (takeRecords), not only when the
      // observer's own task gets to run
      if (self.pending.length > 0) self.resolvePending(false);
      self.ownEnd();
    };
    this.afterFrame = function afterFrame() { self.ownBegin(K_FRAME); self.runWork(); self.ownEnd(); };

    // (a declared name: a property's arrow has only the name V8 infers,
    // and an eagerly compiled one none — profiles and traces say onTick)
    const onTick = (t) => {
      this.tick++;
      // the animation frame's start (a number into a typed array: nothing allocated)
      if (t > 0) this.fr[FR_TICK_AT] = t;
      this.raf = requestAnimationFrame(this.onTick);
    };
    this.onTick = onTick;
    if (typeof requestAnimationFrame === 'function') this.raf = requestAnimationFrame(this.onTick);

    this.onKeyDown = (e) => {
      if (this.noteBox) {
        // typing a note: the game sees none of it (text still goes into
        // the box: stopping the event's way is not preventing its default)
        e.stopImmediatePropagation();
        if (e.key === 'Enter') { e.preventDefault(); this.noteSend(true); }
        else if (e.key === 'Escape') { e.preventDefault(); this.noteSend(false); }
        return;
      }
      if (e.code) this.keysHeld.add(e.code);
      if (chordMatches(this.chord, e)) {
        e.preventDefault();
        e.stopPropagation();
        this.askForNote();
      }
    };
    this.onKeyPress = (e) => { if (this.noteBox) e.stopImmediatePropagation(); };
    this.onKeyUp = (e) => { if (e.code) this.keysHeld.delete(e.code); };
    this.onBlur = () => this.keysHeld.clear();
    this.hidden = typeof document !== 'undefined' && document.visibilityState === 'hidden';
    this.onHide = () => {
      this.hidden = document.visibilityState === 'hidden';
      if (this.hidden) this.leave();
    };
    this.onPageHide = () => this.leave();
    if (typeof window !== 'undefined') {
      window.addEventListener('keydown', this.onKeyDown, true);
      window.addEventListener('keyup', this.onKeyUp, true);
      window.addEventListener('keypress', this.onKeyPress, true);
      window.addEventListener('blur', this.onBlur);
      window.addEventListener('pagehide', this.onPageHide);
      document.addEventListener('visibilitychange', this.onHide);
    }

    if (this.loafSupported) {
      this.observer = new PerformanceObserver((list) => {
        this.ownBegin(K_LOAF);
        this.keepLoafs(list.getEntries());
        this.resolvePending(false);
        this.ownEnd();
      });
      try { this.observer.observe({ type: 'long-animation-frame', buffered: false }); } catch { this.loafSupported = false; }
    }

    this.refreshContext();
    this.lastBeatAt = now();
    this.ctxTimer = setInterval(() => { this.ownBegin(K_SECOND); this.everySecond(); this.ownEnd(); }, 1000);
    this.beatTimer = setInterval(() => { this.ownBegin(K_BEAT); this.heartbeat(); this.ownEnd(); }, this.heartbeatMs);
    this.findPanel();
    // the camera the game renders with is a tracked point with no game
    // code (docs/recorder.md, "Jitter"): a track of its own, filled after
    // the frame's first render (its world matrix is the frame's then)
    if (this.autoCam === -1) {
      this.autoCam = this.motion.addTrack('camera', {});
      this.trackGet.push(null);
      this.trackReach.push(null);
      this.growTracks();
    }
    this.warm();
    globalThis[REGISTRY] = this.api;
  }

  detectRegime() {
    if (this.kind === 'webgpu') {
      // the backend says which API it drives; the adapter's name is not
      // exposed synchronously, so the regime is not known
      this.gpu = '';
      return 'unknown';
    }
    try {
      const gl = this.renderer.getContext();
      const ext = gl.getExtension('WEBGL_debug_renderer_info');
      const s = ext ? String(gl.getParameter(ext.UNMASKED_RENDERER_WEBGL)) : '';
      this.gpu = s;
      if (!s) return 'unknown';
      return /swiftshader|llvmpipe|software|softpipe|basic render/i.test(s) ? 'software' : 'hardware';
    } catch { return 'unknown'; }
  }

  // Once a second, between frames: the context, the heap, and the rolling
  // median over the whole ring.  The median is a selection over 600
  // frames: on the frame (it was every 30th) it costs 0.01 ms optimised
  // but 0.07–0.1 ms in the code V8 keeps for a function run a few times a
  // second — half the recorder's budget.  A median a second old, over ten
  // seconds of frames, says the same.
  everySecond() {
    this.refreshContext();
    if (this.identity === null && (this.identity = pageIdentity()) !== null) this.addMsSeen = this.identity.addMs;
    if (!this.panelHost) this.findPanel();
    if (this.frameNo - this.baseFrame >= MEDIAN_YOUNG) this.ring.medianInto('frameMs', this.fr, FR_MEDIAN, FR_BASE_END);
  }

  // The recorder's own main-thread time, task by task (nested calls count
  // once).  It is put on the frame it lands in (FR_SELF → ring.selfMs),
  // and that frame is judged without it: the recorder is never the hitch
  // it reports.
  ownBegin(kind = K_OTHER) {
    if (this.ownDepth++ === 0) {
      this.own[OWN_START] = performance.now();
      this.own[OWN_KIND] = kind;
    }
  }

  ownEnd() {
    if (--this.ownDepth > 0) return;
    this.ownDepth = 0;
    const ms = performance.now() - this.own[OWN_START];
    if (ms > 0) this.own[OWN_TIMED] += ms;
    this.ownAdd(ms, this.own[OWN_KIND]);
  }

  // An after-frame task says which of its steps it was (a slice, a
  // census's end, a record): its own time is named by the step.
  ownStep(kind) {
    if (this.ownDepth > 0 && this.own[OWN_KIND] === K_FRAME) this.own[OWN_KIND] = kind;
  }

  ownAdd(ms, kind) {
    if (!(ms > 0)) return;
    const o = this.own;
    o[OWN_TOTAL] += ms;
    o[OWN_TASKS] += 1;
    if (ms > o[OWN_MAX]) {
      o[OWN_MAX] = ms;
      o[OWN_MAX_KIND] = kind;
    }
    const k = this.ownKinds, b = kind * 4;
    k[b]++; k[b + 1] += ms;
    if (ms > k[b + 2]) k[b + 2] = ms;
    if (ms >= 1) {
      k[b + 3]++;
      this.ownLong++;
      this.ownLongLast.push({ kind: OWN_KINDS[kind], ms: r1(ms), frame: this.frameNo, hitchesMade: this.made.hitch });
      if (this.ownLongLast.length > 8) this.ownLongLast.shift();
    }
    this.fr[FR_SELF] += ms;
  }

  ownByKind() {
    const k = this.ownKinds, out = {};
    for (let i = 0; i < OWN_KINDS.length; i++) {
      if (k[4 * i] > 0) out[OWN_KINDS[i]] = { tasks: k[4 * i], ms: r1(k[4 * i + 1]), maxMs: r1(k[4 * i + 2]), over1ms: k[4 * i + 3] };
    }
    return out;
  }

  // The page is hidden or going away: what waits for the after-frame
  // tasks (a census, a record's steps) is made now — nobody plays a
  // hidden page, and a tab closed just after a stutter would take its
  // record with it — and handed to the browser's beacon.  A long-script
  // hitch still waiting for its script keeps waiting: made now, it would
  // say the browser made no entry when the entry had only not come yet.
  leave() {
    if (this.recording && (this.workQueued || this.nWork > 0 || this.cs.running || this.ended !== null)) {
      try { this.runWork(Infinity); } catch { /* never in the page's way as it goes */ }
    }
    this.outbox.beacon();
  }

  // The sloptimize panel (panel.js) marks its host element `data-open`
  // while it is open: frames then are held, not judged (its own drawing
  // would be the game's stutter).  Watched, not polled per frame.
  findPanel() {
    if (this.panelHost || typeof document === 'undefined' || typeof MutationObserver === 'undefined') return;
    const host = document.querySelector('[data-sloptimize="panel"]');
    if (!host) return;
    this.panelHost = host;
    this.panelOpen = host.hasAttribute('data-open');
    this.panelObserver = new MutationObserver(() => { this.panelOpen = host.hasAttribute('data-open'); this.changed(); });
    this.panelObserver.observe(host, { attributes: true, attributeFilter: ['data-open'] });
  }

  refreshContext() {
    if (this.context) {
      try { this.ctx = canonicalContext(this.context()); } catch { /* the host's bug: keep the last one */ }
    }
    const m = performance.memory;
    if (m && m.usedJSHeapSize) {
      const mb = m.usedJSHeapSize / 1048576;
      this.heapDropMb = Number.isFinite(this.heapMb) && mb < this.heapMb ? this.heapMb - mb : 0;
      this.heapMb = mb;
    }
  }

  // --- per frame (the steady path: no allocation below unless a record is made)

  onRenderStart(scene, camera) {
    if (!this.frameOpen || this.frameTick !== this.tick) {
      // A game that renders on demand (a dice roll, an editor) leaves
      // animation frames with no render between two of its frames: the
      // time it sat idle is not this frame's.  The frame then starts at
      // the last animation frame's start, not at the last render's end.
      const idle = this.frameTick >= 0 && this.tick - this.frameTick >= 2;
      if (this.frameOpen) this.closeFrame();
      this.openFrame();
      const fr = this.fr;
      if (idle && fr[FR_TICK_AT] > fr[FR_PREV_END]) fr[FR_PREV_END] = fr[FR_TICK_AT];
    }
    // remember the scenes of this frame (a composer renders several)
    let known = false;
    for (let i = 0; i < this.nScenes; i++) if (this.scenes[i] === scene) known = true;
    if (!known && this.nScenes < MAX_SCENES) this.scenes[this.nScenes++] = scene;
    if (this.camera === null || this.nScenes === 1) this.camera = camera;
    if (this.autoCam >= 0 && !this.camFilled) this.frameCam = camera;
  }

  onRenderEnd() {
    const t0 = this.times[0], t1 = this.times[1];
    const info = this.renderer.info;
    const fr = this.fr;
    fr[FR_INSIDE] += t1 - t0;
    fr[FR_END] = t1;
    if (info) {
      const r = info.render;
      if (r) {
        // WebGPU's render.calls counts render() calls, not draws: its
        // drawCalls is the draw count
        const calls = this.kind === 'webgpu' ? r.drawCalls | 0 : r.calls;
        if (info.autoReset === false) {
          this.curCalls = calls; this.curTriangles = r.triangles; this.curPoints = r.points; this.curLines = r.lines;
        } else {
          this.curCalls += calls; this.curTriangles += r.triangles; this.curPoints += r.points; this.curLines += r.lines;
        }
      }
      const m = info.memory;
      if (m) { this.memGeometries = m.geometries; this.memTextures = m.textures; }
      if (info.programs) this.memPrograms = info.programs.length;
    }
    // the automatic camera track: the first render's camera, where the
    // render left it (its world matrix is this frame's now)
    if (this.autoCam >= 0 && !this.camFilled) this.fillCamera();
    // and the view snapshots': the camera the frame drew with, into the
    // slot this frame will have (before the game moves it for the next)
    if (!this.camRinged) { this.camRinged = true; this.ring.camInto(this.ring.slot(), this.camera); }
    // Judge a frame that will wake the agent as soon as its delta is
    // known: once it is past the hitch threshold and WAKE_MS it is such a
    // hitch whatever render calls follow, so it is closed at the end of
    // this task (after a composer's other passes) rather than at the next
    // animation frame's first render — which a stall in the GPU process
    // can hold back by hundreds of milliseconds.  A shorter hitch wakes
    // nobody: it closes the ordinary way, which costs its frame less
    // (queueMicrotask allocates, and the microtask's way in is not cheap).
    if (!this.closeQueued && !this.curPaused) {
      const prev = fr[FR_PREV_END];
      if (prev === prev) {
        const med2 = fr[FR_MEDIAN] === fr[FR_MEDIAN] ? 2 * fr[FR_MEDIAN] : 0;
        const abs = fr[FR_ABS];
        const d = t1 - prev;
        if (d > (med2 > abs ? med2 : abs) && d >= WAKE_MS) this.queueClose();
      }
    }
  }

  fillCamera() {
    this.camFilled = true;
    const cam = this.frameCam, k = this.autoCam, pos = this.pos;
    this.frameCam = null;
    pos[3 * k] = NaN;
    if (!cam || !cam.matrixWorld || !cam.matrixWorld.elements) return;
    if (cam !== this.autoCamObj) {
      // another camera: a cut on purpose, never a jump
      if (this.autoCamObj !== null) this.motion.cutAt(k);
      this.autoCamObj = cam;
    }
    const e = cam.matrixWorld.elements;
    pos[3 * k] = e[12]; pos[3 * k + 1] = e[13]; pos[3 * k + 2] = e[14];
    const sum = e[12] + e[13] + e[14];
    if (!(sum - sum === 0)) { pos[3 * k] = NaN; this.motion.cutAt(k); }
  }

  queueClose() {
    this.closeQueued = true;
    queueMicrotask(this.closeSoon);
  }

  openFrame() {
    this.frameTick = this.tick;
    this.frameOpen = true;
    this.fr[FR_INSIDE] = 0;
    // The animation frame's time.  Our own animation-frame callback was
    // given it when it ran before this render in this frame (it was made
    // before the game's loop: the usual case): then the timeline need not
    // be read — a read costs ~10 µs with the caches cold, a quarter of
    // a frame's close (docs/performance.md).  Checked against the
    // timeline one frame in ANIM_CHECK, and read every frame while the
    // two differ (a game whose callback runs before ours).  (null while
    // the document is inactive: 0 here, then no delta below.)
    const tl = this.timeline;
    if (tl === null) this.fr[FR_ANIM] = NaN;
    else if (this.tickIsAnim && --this.animCheck > 0) this.fr[FR_ANIM] = this.fr[FR_TICK_AT];
    else {
      const ct = tl.currentTime;
      this.fr[FR_ANIM] = ct;
      this.tickIsAnim = ct === this.fr[FR_TICK_AT];
      this.animCheck = ANIM_CHECK;
    }
    this.curCalls = 0; this.curTriangles = 0; this.curPoints = 0; this.curLines = 0;
    this.nScenes = 0;
    const hidden = this.hidden;     // kept by a visibilitychange listener, not read per frame
    // a frame that follows a hidden page measured the time away, not a
    // frame; a frame while the panel is open (or just after it closed)
    // paid for the panel's drawing: held, not judged, and said
    const panel = this.panelOpen;
    this.curPanel = panel || this.panelWasOpen;
    this.panelWasOpen = panel;
    this.curPaused = hidden || this.wasHidden || this.phase === 'paused' || this.curPanel;
    this.wasHidden = hidden;
    // a canvas resize: the drawing buffer is reallocated by this frame's
    // render, and the frame time's level may move (two integer reads)
    const cv = this.canvas;
    if (cv) {
      const w = cv.width | 0, h = cv.height | 0;
      this.curResize = false;
      if (w !== this.canvasW || h !== this.canvasH) {
        if (this.canvasW >= 0) { this.curResize = true; this.prevW = this.canvasW; this.prevH = this.canvasH; }
        this.canvasW = w; this.canvasH = h;
      }
    }
    this.camFilled = false;
    this.camRinged = false;
    const n = this.trackGet.length;
    // the host's hold/cut for this frame, then the tracked positions
    if (this.anyHold) {
      for (let k = 0; k < n; k++) {
        if (this.holdAll || this.holdFlag[k] !== 0) this.motion.holdAt(k);
        if (this.cutAll || this.cutFlag[k] !== 0) this.motion.cutAt(k);
        this.holdFlag[k] = 0; this.cutFlag[k] = 0;
      }
      this.holdAll = false; this.cutAll = false; this.anyHold = false;
    }
    const pos = this.pos;
    for (let k = 0; k < n; k++) {
      const get = this.trackGet[k];
      if (get === null) continue;     // the automatic camera: filled after the first render
      // straight into the typed array: a double held across the try would
      // be boxed for the handler
      pos[3 * k] = NaN;
      try {
        const p = get();
        if (p) {
          if (p.x !== undefined) { pos[3 * k] = p.x; pos[3 * k + 1] = p.y; pos[3 * k + 2] = p.z; }
          else { pos[3 * k] = p[0]; pos[3 * k + 1] = p[1]; pos[3 * k + 2] = p[2]; }
        }
        const rg = this.trackReach[k];
        if (rg !== null) this.reach[k] = rg();
      } catch { pos[3 * k] = NaN; /* a track that throws is skipped this frame */ }
      // finite: x − x is 0 for every finite x, NaN for NaN and ±Infinity
      const sum = pos[3 * k] + pos[3 * k + 1] + pos[3 * k + 2];
      if (!(sum - sum === 0)) this.motion.cutAt(k);
    }
  }

  closeFrame() {
    this.frameOpen = false;
    const ring = this.ring;
    const s = ring.slot();
    const fr = this.fr;
    const first = !(fr[FR_PREV_END] === fr[FR_PREV_END]);     // NaN: no frame before
    const frameMs = first ? 0 : fr[FR_END] - fr[FR_PREV_END];
    const paused = this.curPaused || first;
    const resized = this.curResize;
    // the stacks identity's add() captured for what the game added in
    // this frame: the runtime's time, in the game's task
    const idn = this.identity;
    if (idn !== null && idn.addMs !== this.addMsSeen) {
      const ms = idn.addMs - this.addMsSeen;
      this.addMsSeen = idn.addMs;
      this.ownAdd(ms, K_ADD);
    }
    const self = fr[FR_SELF];       // the recorder's own time that landed in this frame
    fr[FR_SELF] = 0;
    const dG = this.memGeometries - this.prevGeometries;
    const dT = this.memTextures - this.prevTextures;
    const dP = this.memPrograms - this.prevPrograms;
    this.frameNo++;
    ring.end[s] = fr[FR_END];
    ring.frameMs[s] = frameMs;
    ring.insideMs[s] = fr[FR_INSIDE];
    ring.selfMs[s] = self;
    ring.frame[s] = this.frameNo;
    ring.flags[s] = (paused ? FLAG_PAUSED : 0) | (resized ? FLAG_RESIZE : 0) | (this.curPanel ? FLAG_PANEL : 0);
    if (this.curPanel) { this.panelFrames++; this.panelFramesTotal++; }
    ring.calls[s] = this.curCalls; ring.triangles[s] = this.curTriangles;
    ring.points[s] = this.curPoints; ring.lines[s] = this.curLines;
    ring.geometries[s] = dG; ring.textures[s] = dT; ring.programs[s] = dP;
    ring.spawned[s] = 0;
    ring.anim[s] = fr[FR_ANIM];
    ring.commit();
    for (let i = 0; i < this.nScenes; i++) this.censusScenes[i] = this.scenes[i];
    this.nCensusScenes = this.nScenes;
    // The first census only marks what is there as seen.  It walks now,
    // once, at the close of the first frame — before the next frame's
    // render, which may draw what the game added meanwhile (the first roll
    // of a dice game, whose compile is the find): a census after that
    // render would take the burst for the scene that was already there.
    if (!this.censused) { this.censused = true; this.firstCensus(); }

    // The hitch rule, inline (a call with double arguments boxes them), on
    // the frame without the recorder's own time.  No relative judgement
    // before WARM_FRAMES frames of the current level (the start, or a
    // resize): against a median of one or two frames every slow game's
    // frame is a hitch.  Until then only a frame whose resources moved
    // (a compile, an upload) and that would wake the agent is judged.
    const game = frameMs - self;
    const abs = fr[FR_ABS];
    const young = this.frameNo - this.baseFrame <= WARM_FRAMES;
    const med2 = !young && fr[FR_MEDIAN] === fr[FR_MEDIAN] ? 2 * fr[FR_MEDIAN] : 0;
    const hitch = !paused && (resized
      ? game > (med2 > abs ? med2 : abs)
      : young ? (dP > 0 || dT > 0) && game > (abs > WAKE_MS ? abs : WAKE_MS)
        : game > (med2 > abs ? med2 : abs));
    // a census when the scene's resources moved or the frame is judged,
    // never on a steady frame; it and the hitch's record are made in a
    // task after the frame (runWork): the recorder must never be the
    // hitch it reports.  What must be read now is: the camera.
    if (hitch || dG !== 0 || dT !== 0 || dP !== 0 || this.crowdDrawn(s)) {
      this.addWork(s, hitch ? W_HITCH | W_CENSUS : W_CENSUS);
    }
    if (resized) {
      // the level after a resize is its own: the median starts again from
      // the frames after this one (a resize is one record, not a flood)
      this.baseFrame = this.frameNo;
      fr[FR_BASE_END] = fr[FR_END];
      this.resizeFrom0 = this.prevW; this.resizeFrom1 = this.prevH;
      this.lastResize = this.frameNo;
    }

    if (this.motion.tracks.length > 0) {
      const clock = this.motion.clock;
      // the animation frames' delta where it moved (this.timeline), else
      // the render ends' (a page with no timeline, a render outside them)
      const anim = fr[FR_ANIM] - fr[FR_PREV_ANIM];
      clock[0] = fr[FR_END]; clock[1] = paused ? 0 : anim > 0 && fr[FR_PREV_ANIM] > 0 ? anim : frameMs; clock[2] = fr[FR_MEDIAN];
      this.motion.step(this.frameNo, this.pos, this.hasReach ? this.reach : null);
    }

    fr[FR_PREV_END] = fr[FR_END];
    fr[FR_PREV_ANIM] = fr[FR_ANIM];
    this.prevGeometries = this.memGeometries; this.prevTextures = this.memTextures; this.prevPrograms = this.memPrograms;
    this.prevCalls = this.curCalls;
    // a long-script hitch waits for its entry only so many frames
    // (resolvePending); the after-frame task looks
    if (this.loafDue !== 0 && this.frameNo >= this.loafDue) { this.loafDue = 0; this.queueWork(); }
    // a young level's median is cheap and moves fast: remade each frame
    // until the once-a-second one takes over (everySecond)
    if (this.frameNo - this.baseFrame < MEDIAN_YOUNG) ring.medianInto('frameMs', fr, FR_MEDIAN, FR_BASE_END);
  }

  // Queued work item `from` into place `to` (the queue closes up).
  moveWork(to, from) {
    this.workSlot[to] = this.workSlot[from]; this.workKind[to] = this.workKind[from];
    this.workHasCam[to] = this.workHasCam[from];
    for (let c = 0; c < CAM; c++) this.workCam[to * CAM + c] = this.workCam[from * CAM + c];
  }

  // Queue frame slot `s` for the after-frame task.  Numbers only; the
  // task's own scheduling (a timer) is the one allocation, and only a
  // frame with something to say makes it.
  addWork(s, kind) {
    let i = this.nWork;
    if (i === MAX_WORK) {
      // the task has not run for MAX_WORK such frames (a starved main
      // thread): a census-only frame gives its place, a hitch never does
      let j = 0;
      while (j < MAX_WORK && (this.workKind[j] & W_HITCH) !== 0) j++;
      if (j === MAX_WORK) j = 0;      // all hitches: the oldest goes (its record is dropped, counted)
      if ((this.workKind[j] & W_HITCH) !== 0) this.hitchLimit.dropped++;
      for (let k = j; k < MAX_WORK - 1; k++) this.moveWork(k, k + 1);
      i = MAX_WORK - 1;
    }
    this.workSlot[i] = s;
    this.workKind[i] = kind;
    this.workHasCam[i] = 0;
    const cam = this.camera;
    if ((kind & W_HITCH) !== 0 && cam !== null && cam.position && cam.quaternion) {
      const w = this.workCam, o = i * CAM, p = cam.position, q = cam.quaternion;
      w[o] = p.x; w[o + 1] = p.y; w[o + 2] = p.z; w[o + 3] = q.x; w[o + 4] = q.y; w[o + 5] = q.z; w[o + 6] = q.w;
      this.workHasCam[i] = 1;
    }
    this.nWork = i + 1;
    this.queueWork();
  }

  queueWork() {
    if (this.workQueued) return;
    this.workQueued = true;
    setTimeout(this.afterFrame, 0);
  }

  // The after-frame task: one census for the frames that wanted one, in
  // slices of at most CENSUS_SLICE_MS (a big scene takes several tasks:
  // no task of the recorder's own is long), then its end (a task of its
  // own), then the hitches' records and the jitter records.  The
  // census's finds go to the frame whose resources moved (a compile, an
  // upload, new geometry: where they appeared), else to the first hitch
  // queued, else to the first frame — never to whichever hitch happened
  // to be queued first.  Anything that reads the census
  // state or the ring's spawned counts (a heartbeat, a usermark, stop)
  // runs it first.  `budget` Infinity: to the end now (flush, stop), or
  // — a hitch that wakes the agent, at its frame's end — through at most
  // `most` objects walked, the census's end and records at once if the
  // walk ended within them (a small scene's wake leaves now, a big one's
  // in the slices after).
  runWork(budget = CENSUS_SLICE_MS, most = Infinity, covered = true) {
    this.workQueued = false;
    const c = this.cs;
    // a record's second half goes first, a task of its own (records
    // stay in the order made)
    if (budget !== Infinity && this.finishing.length > 0) this.finishRecord(this.finishing.shift());
    else for (;;) {
      // hitches a census covered whose records wait (at the queue's head:
      // the oldest) go first, RECORDS_PER_TASK a task — but not in a
      // waking close (`covered` false), which makes its own frame's record
      // and leaves them to the tasks after
      if (covered && this.nWork > 0 && (this.workKind[0] & W_COVERED) !== 0) {
        this.makeCovered(budget === Infinity ? Infinity : RECORDS_PER_TASK);
        if (budget !== Infinity) break;
        continue;
      }
      let census = this.ended;
      this.ended = null;
      // a census's finds are named in tasks of their own (NAME_SLICE_MS),
      // its records in the tasks after
      if (census !== null && census.naming) {
        if (budget === Infinity) this.nameFinds(census, Infinity);
        else { this.ownStep(K_NAMES); this.nameFinds(census, NAME_SLICE_MS); this.ended = census; this.queueWork(); break; }
      }
      if (census === null) {
        if (!c.running && !c.done && this.uncovered() > 0) this.censusBegin(this.censusDone);
        if (c.running) {
          most -= this.censusStep(budget, most);
          if (c.running) { this.queueWork(); break; }
          // the walk ended in this task: its end waits for the next one,
          // so that no task of the recorder's does both
          if (budget !== Infinity) { this.queueWork(); break; }
        }
        if (c.done) {
          census = this.censusEnd();
          this.ownStep(K_CENSUS_END);
          this.censusDone = true;
          // and the naming and the records for the tasks after that:
          // each is some tenths of a millisecond, together past 1 ms on a
          // loaded machine (no census begins meanwhile: the frames it
          // covers are still queued)
          if (budget === Infinity) this.nameFinds(census, Infinity);
          else if (this.nWork > 0 || census.naming) { this.ended = census; this.queueWork(); break; }
        }
      }
      // frames closed after the census began wait for the next one: the
      // walk may have passed what they drew before they drew it
      if (this.workFor(census, c.began, budget === Infinity ? Infinity : RECORDS_PER_TASK) === 0) break;
      if (budget !== Infinity) { this.queueWork(); break; }
    }
    if (budget === Infinity) while (this.finishing.length > 0) this.finishRecord(this.finishing.shift());
    // (records still waiting, or frames for the next census: a task
    // after this one; queueWork does nothing if one is queued)
    if (this.nWork > 0 || this.finishing.length > 0 || this.ended !== null || c.running) this.queueWork();
    this.motion.flush();
    if (this.pending.length > 0) this.resolvePending(false);
  }

  // Give a finished census's finds to the queued frames it covers (those
  // closed by the time it began) and make their hitches' records, at most
  // `records` of them (the others wait, W_COVERED, the finds kept for
  // theirs); keep the rest queued, in order.  Returns how many still
  // wait for a census.
  workFor(census, began, records = Infinity) {
    const n = this.nWork;
    const ring = this.ring;
    const all = census === null;       // no census: every queued frame goes now
    // (a hitch an earlier census covered has had its finds: never again)
    const covered = (i) => (this.workKind[i] & W_COVERED) === 0 && (all || ring.frame[this.workSlot[i]] <= began);
    // Programs or textures this census found new that no frame it covers
    // made (their counters did not move there) are a later frame's: its
    // sliced walk met a material after that frame compiled it — a frame
    // closed while it walked, or the one still open, which closes only
    // when the next one starts (on a loaded machine the slices are far
    // apart).  Such finds wait, with the next census, for a census that
    // covers that frame (`until`, the frame open now).
    const fresh = census !== null && this.unexplained(census, covered);
    if (census && this.carry) {
      const until = this.carry.until;
      census = mergeFinds(this.carry, census);
      census.until = until;
      this.carry = null;
    }
    if (fresh) census.until = this.frameNo + 1;
    if (n === 0) {
      // (a heartbeat's census, no frame waiting): only what waits is kept
      if (census && census.until > began) this.carry = census;
      return 0;
    }
    // (geometries too: a spawn burst of new meshes moves them, not programs)
    const moved = (i) => { const s = this.workSlot[i]; return ring.programs[s] > 0 || ring.textures[s] > 0 || ring.geometries[s] > 0; };
    let target = -1, any = false;
    // Objects alone are the frame's that drew the most that is new — its
    // geometries and draw calls risen: a crowd's own frame (one geometry
    // shared by a thousand crates moves only the calls), not the hitch
    // after it whose stall it caused (on a software renderer the GPU
    // process catches up in the next frame; that hitch's record says the
    // frame before, hitchAt)
    if (census && census.programs + census.textures === 0 && census.spawnedCount > 0) {
      let most = 0;
      for (let i = 0; i < n; i++) {
        if (!covered(i)) continue;
        const s = this.workSlot[i], p = (s - 1 + ring.capacity) % ring.capacity;
        const rise = ring.geometries[s] + Math.max(0, ring.calls[s] - ring.calls[p]);
        if (rise > most) { most = rise; target = i; }
      }
    }
    for (let i = 0; i < n && target < 0; i++) if (covered(i) && (this.workKind[i] & W_HITCH) !== 0 && moved(i)) target = i;
    for (let i = 0; i < n && target < 0; i++) if (covered(i) && moved(i)) target = i;
    for (let i = 0; i < n && target < 0; i++) if (covered(i) && (this.workKind[i] & W_HITCH) !== 0) target = i;
    for (let i = 0; i < n && !any; i++) any = covered(i);
    if (target < 0 && any) for (let i = 0; i < n && target < 0; i++) if (covered(i)) target = i;
    // a census no queued frame was closed before (frames came while it
    // walked): what it found may be theirs, so it goes with the next one;
    // so do finds that wait for a frame not covered yet (above)
    let finds = census;
    if (census && (!any || (census.until > began && this.unexplained(census, covered)))) {
      this.carry = census; finds = null; target = -1;
    }
    if (finds && target >= 0) {
      const s = this.workSlot[target];
      this.censuses++;
      ring.spawned[s] = finds.spawnedCount;
      // what was first used in a frame, kept for the frame after it: a
      // stall there is the same cause (the GPU process finishing it)
      if (moved(target) || finds.uploadBytes > 0 || finds.spawnedCount >= this.spawnBurst) {
        if (this.lastFinds !== null && this.lastFinds.frame !== ring.frame[s]) this.olderFinds = this.lastFinds;
        this.lastFinds = { frame: ring.frame[s], sites: finds.sites, sitesBy: finds.sitesBy, minted: finds.minted, mintedCount: finds.mintedCount,
          mintedIds: finds.mintedIds, spawned: finds.spawned, spawnedCount: finds.spawnedCount, spawnedEntities: finds.spawnedEntities,
          uploadBytes: finds.uploadBytes, programs: ring.programs[s], textures: ring.textures[s], delta: this.deltaOf(s) };
      }
    }
    let m = 0, made = 0;
    for (let i = 0; i < n; i++) {
      const s = this.workSlot[i];
      if (covered(i)) {
        if ((this.workKind[i] & W_HITCH) === 0) continue;
        const mine = finds && i === target ? finds : NO_CENSUS;
        if (made < records) { made++; this.hitchAt(s, mine, i); continue; }
        this.workKind[i] = W_HITCH | W_COVERED;
        if (mine !== NO_CENSUS) this.coveredFinds = { frame: ring.frame[s], finds: mine };
      }
      if (m !== i) this.moveWork(m, i);
      m++;
    }
    this.nWork = m;
    return this.uncovered();
  }

  // Did this frame draw a crowd that moved no memory counter — meshes whose
  // geometry and material were in use before?  Its draw calls rose by a
  // spawn burst over the frame before and past the most any frame in the
  // ring drew: a camera turning back to what it saw a few seconds ago does
  // not queue a census, new objects drawn do.  Without one, a stall that
  // lands in the next frame (the GPU process catching up) took the crowd
  // for its own.  The ring is read only on such a jump.  (The first frame's
  // rise from nothing is the scene the first census marks as seen.)
  crowdDrawn(s) {
    if (this.frameNo === 1 || this.curCalls - this.prevCalls < this.spawnBurst) return false;
    const ring = this.ring, calls = ring.calls;
    for (let i = 0; i < ring.capacity; i++) if (i !== s && calls[i] >= this.curCalls) return false;
    return true;
  }

  // What a census found in `frame` (one of the last two it gave finds to), or null.
  findsOf(frame) {
    if (this.lastFinds !== null && this.lastFinds.frame === frame) return this.lastFinds;
    if (this.olderFinds !== null && this.olderFinds.frame === frame) return this.olderFinds;
    return null;
  }

  // How many queued frames still wait for a census (not W_COVERED).
  uncovered() {
    let n = 0;
    for (let i = 0; i < this.nWork; i++) if ((this.workKind[i] & W_COVERED) === 0) n++;
    return n;
  }

  // The records of up to `max` covered hitches at the queue's head (their
  // census is done: the target's finds, else none), and off the queue.
  makeCovered(max) {
    const ring = this.ring;
    let k = 0;
    for (; k < this.nWork && k < max && (this.workKind[k] & W_COVERED) !== 0; k++) {
      const s = this.workSlot[k], cf = this.coveredFinds;
      const mine = cf !== null && cf.frame === ring.frame[s] ? cf.finds : NO_CENSUS;
      if (mine !== NO_CENSUS) this.coveredFinds = null;
      this.hitchAt(s, mine, k);
    }
    for (let i = k; i < this.nWork; i++) this.moveWork(i - k, i);
    this.nWork -= k;
  }

  // Did the census find programs or textures new that no queued frame it
  // covers made (each kind it found, that kind's counter moved in none)?
  // Or — it found nothing else — objects new that no frame it covers drew
  // new geometry for, while a frame after those did (one still queued, or
  // the one open now)?  A frame closes at the next one's first render,
  // after the game's update for that one: the census of a hitch walks a
  // scene that already holds the crowd the frame after it added and
  // drew, and the crowd is that frame's.
  unexplained(census, covered) {
    const compiled = census.programs + census.textures > 0;
    if (!compiled && census.spawnedCount === 0) return false;
    const ring = this.ring;
    let p = 0, t = 0, g = 0, later = this.memGeometries > this.prevGeometries;
    for (let i = 0; i < this.nWork; i++) {
      const s = this.workSlot[i];
      if (!covered(i)) { if (ring.geometries[s] > 0) later = true; continue; }
      if (ring.programs[s] > 0) p++;
      if (ring.textures[s] > 0) t++;
      if (ring.geometries[s] > 0) g++;
    }
    if (!compiled) return g === 0 && later;
    return (census.programs === 0 || p === 0) && (census.textures === 0 || t === 0);
  }

  /*
   * The census: walk the frame's scenes for objects first rendered since
   * the last census (spawned), resources first used since then (a program
   * compiled, a texture uploaded: their bytes estimated), and the
   * material@object pairs they belong to (minted, and as stable sites).
   * With `mint` false (the first census) everything is only marked as
   * seen.  It runs only when something moved (a hitch, a memory counter),
   * and once a heartbeat; it allocates only for what it finds: an
   * explicit stack (reused), one visitor, two object lists and a
   * generation stamp per object (removed = on the last list, not stamped
   * this time).  Sliced: censusStep() walks until its budget is spent.
   */
  censusBegin(mint) {
    const c = this.cs;
    c.gen++;
    c.began = this.frameNo;       // it covers the frames closed by now
    c.mint = mint;
    c.running = true;
    c.done = false;
    const props = this.renderer.properties;
    // three r15x and later have properties.has(); before, only get(),
    // which makes an empty entry for what it has not seen (harmless: three
    // makes the same on first use)
    c.props = props && typeof props.get === 'function' ? props : null;
    c.propsHas = c.props !== null && typeof props.has === 'function';
    c.spawned = null; c.spawnedCount = 0; c.minted = null; c.sites = null; c.spawnedObjs = null; c.mintedObjs = null; c.sitesBy = null; c.newTextures = null; c.newPrograms = null;
    c.uploadBytes = 0;
    c.memo.m = null; c.memo.parent = null;
    const swap = c.prev; c.prev = c.cur; c.cur = swap; c.nPrev = c.nCur; c.nCur = 0;
    c.nStack = 0;
    for (let i = this.nCensusScenes - 1; i >= 0; i--) {
      const sc = this.censusScenes[i];
      if (sc) c.stack[c.nStack++] = sc;
    }
  }

  // The first census, whole, now (closeFrame): what it meets is marked
  // seen, nothing is minted.  Once per recorder.
  firstCensus() {
    if (this.cs.running || this.censusDone) return;
    this.ownBegin(K_FIRST_CENSUS);
    this.censusBegin(false);
    this.censusStep(Infinity);
    this.censusEnd();
    this.censusDone = true;
    this.ownEnd();
  }

  // Walk until the stack is empty (the census no longer `running`), or
  // `budget` ms are spent or `most` objects visited; the objects visited.
  censusStep(budget, most = Infinity) {
    const c = this.cs, stack = c.stack;
    const t0 = budget === Infinity ? 0 : performance.now();
    let k = 0;
    while (c.nStack > 0) {
      if (k >= most) return k;
      const o = stack[--c.nStack];
      stack[c.nStack] = null;
      if (!o || o.visible === false) continue;
      this.censusVisit(o);
      const ch = o.children;
      if (ch) for (let i = ch.length - 1; i >= 0; i--) stack[c.nStack++] = ch[i];
      if ((++k & 63) === 0 && k >= CENSUS_SLICE_MIN && budget !== Infinity && performance.now() - t0 >= budget) return k;
    }
    c.running = false;
    c.done = true;
    return k;
  }

  censusEnd() {
    const c = this.cs;
    c.done = false;
    const mint = c.mint;
    // only what the walk met is marked seen: a program compiled after the
    // walk passed its material (a sliced census, a frame between its
    // slices) is new to the next census, not lost to this one
    if (c.newTextures) for (const tex of c.newTextures) this.seenTextures.add(tex);
    if (c.newPrograms) for (const prog of c.newPrograms) this.seenPrograms.add(prog);
    let removed = null, removedCount = 0;
    for (let i = 0; i < c.nPrev; i++) {
      const o = c.prev[i];
      c.prev[i] = null;             // no reference kept to what left
      if (c.stamp.get(o) === c.gen) continue;
      removedCount++;
      if (mint) {
        if (!removed) removed = [];
        if (removed.length < MAX_NAMES) removed.push(objName(o));
      }
    }
    for (let i = c.nCur; i < c.cur.length; i++) c.cur[i] = null;
    const mintedList = c.minted ? [...c.minted].sort() : [];
    const siteList = c.sites ? [...c.sites].sort() : [];
    const by = (set) => (set && set.size ? [...set].sort().slice(0, MAX_MINTED) : []);
    // the entities of what is named (bounded: MAX_NAMES + MAX_MINTED),
    // named after (nameFinds), the objects kept until then
    const spawnedObjs = mint && c.spawnedObjs ? c.spawnedObjs : [];
    const mintedObjs = mint && c.mintedObjs ? mintedList.slice(0, MAX_MINTED).map((k) => [k, c.mintedObjs.get(k)]) : [];
    const naming = spawnedObjs.length + mintedObjs.length > 0 ? { spawned: spawnedObjs, minted: mintedObjs, i: 0, cache: new WeakMap() } : null;
    c.spawnedObjs = null; c.mintedObjs = null; c.memo.m = null; c.memo.parent = null;     // no reference kept
    const sitesBy = c.sitesBy ? { 'shader-compile': by(c.sitesBy.compiled), 'texture-upload': by(dominant(c.sitesBy.uploaded)),
      'spawn-burst': by(c.sitesBy.fresh) } : null;
    return { spawned: mint && c.spawned ? c.spawned : [], spawnedCount: mint ? c.spawnedCount : 0, removed: removed || [],
      removedCount: mint ? removedCount : 0, minted: mintedList.slice(0, MAX_MINTED), mintedCount: mintedList.length,
      spawnedEntities: [], mintedIds: {}, naming,
      sites: siteList.slice(0, MAX_MINTED), sitesBy, uploadBytes: mint ? c.uploadBytes : 0,
      programs: mint && c.newPrograms ? c.newPrograms.length : 0, textures: mint && c.newTextures ? c.newTextures.length : 0 };
  }

  // Name a census's finds (identity.js: an entity's id, and the site its
  // stack says): until `budget` ms are spent, at least one; the objects
  // let go when all are (f.naming null).
  nameFinds(f, budget) {
    const n = f.naming;
    if (!n) return;
    const t0 = budget === Infinity ? 0 : performance.now();
    const ns = n.spawned.length, total = ns + n.minted.length;
    while (n.i < total) {
      const i = n.i++;
      if (i < ns) f.spawnedEntities.push(entityOf(n.spawned[i], n.cache));
      else f.mintedIds[n.minted[i - ns][0]] = entityOf(n.minted[i - ns][1], n.cache);
      if (budget !== Infinity && performance.now() - t0 >= budget) break;
    }
    if (n.i === total) f.naming = null;
  }

  censusVisit(o) {
    if (!(o.isMesh || o.isLine || o.isPoints || o.isSprite)) return;
    const c = this.cs;
    const fresh = !c.stamp.has(o);
    // An object three has never drawn is not counted yet: it is "first
    // rendered" in the frame that draws it.  A census between the task
    // that added a thousand crates and the frame that drew them (the
    // heartbeat's) would otherwise take them, and the spawn's own frame
    // would find none.
    if (fresh && neverDrawn(o)) return;
    c.stamp.set(o, c.gen);
    c.cur[c.nCur++] = o;
    if (fresh) {
      c.spawnedCount++;
      if (c.mint) {
        if (!c.spawned) c.spawned = [];
        if (c.spawned.length < MAX_NAMES) { c.spawned.push(objName(o)); (c.spawnedObjs || (c.spawnedObjs = [])).push(o); }
      }
    }
    const mat = o.material;
    if (Array.isArray(mat)) { for (let i = 0; i < mat.length; i++) this.censusMaterial(o, mat[i], fresh); }
    else this.censusMaterial(o, mat, fresh);
  }

  // A texture three uploaded since the last census: its estimated bytes
  // (0 when already counted in this one).
  newTexture(tex) {
    const c = this.cs;
    if (c.newTextures && c.newTextures.includes(tex)) return 0;
    (c.newTextures || (c.newTextures = [])).push(tex);
    const n = textureBytes(tex);
    c.uploadBytes += n;
    return n;
  }

  // Has three uploaded this texture (r143–r187: __webglTexture is made
  // with its first upload; a texture whose image is still loading has none)?
  uploaded(tex) {
    const c = this.cs, props = c.props;
    if (!tex || !tex.isTexture || this.seenTextures.has(tex) || (c.propsHas && !props.has(tex))) return false;
    const p = props.get(tex);
    return !!p && p.__webglTexture !== undefined;
  }

  censusMaterial(o, m, fresh) {
    if (!m) return;
    const c = this.cs, props = c.props;
    // a material this census already found nothing new in (`known`: the
    // census's generation) is not looked at again for each object that
    // shares it — a crowd of a thousand crates is one material; what
    // changes in it after this walk passed it is the next census's
    if (c.known.get(m) === c.gen) {
      if (fresh && c.mint) this.mintPair(o, m, false, false, 0, true);
      return;
    }
    let minting = fresh;
    let compiled = false, uploaded = false, bytes = 0;
    if (props && (!c.propsHas || props.has(m))) {
      const prog = props.get(m).currentProgram;
      if (prog && !this.seenPrograms.has(prog)) {
        minting = true;
        compiled = true;
        const np = c.newPrograms || (c.newPrograms = []);
        if (!np.includes(prog)) np.push(prog);
      }
    }
    if (props) {
      for (let i = 0; i < TEXTURE_SLOTS.length; i++) {
        const tex = m[TEXTURE_SLOTS[i]];
        if (this.uploaded(tex)) {
          minting = true;
          uploaded = true;
          bytes += this.newTexture(tex);
        }
      }
      const u = m.uniforms;
      if (u) {
        for (const k in u) {
          const tex = u[k] && u[k].value;
          if (this.uploaded(tex)) {
            minting = true;
            uploaded = true;
            bytes += this.newTexture(tex);
          }
        }
      }
    }
    if (!compiled && !uploaded) c.known.set(m, c.gen);
    if (minting && c.mint) this.mintPair(o, m, compiled, uploaded, bytes, fresh);
  }

  // A material@object pair the census found new (its program, a texture,
  // or the object first drawn): its name and stable site, by what made it new.
  mintPair(o, m, compiled, uploaded, bytes, fresh) {
    const c = this.cs;
    // the pair just minted again (a crowd: the same material, parent and
    // name a thousand times): every add below would find its own entry
    const memo = c.memo;
    if (bytes === 0 && o.name && memo.m === m && memo.parent === o.parent && memo.name === o.name &&
        memo.compiled === compiled && memo.uploaded === uploaded && memo.fresh === fresh) return;
    memo.m = m; memo.parent = o.parent; memo.name = o.name;
    memo.compiled = compiled; memo.uploaded = uploaded; memo.fresh = fresh;
    const key = `${matName(m)}@${objName(o)}`;
    (c.minted || (c.minted = new Set())).add(key);
    const mo = c.mintedObjs || (c.mintedObjs = new Map());
    if (!mo.has(key)) mo.set(key, o);
    const site = siteOf(m, o);
    (c.sites || (c.sites = new Set())).add(site);
    // by what made it new: a compile's cause is the materials whose
    // program is new, an upload's those whose texture is — not the
    // note sprites that happened to come into view in the same frame
    const by = c.sitesBy || (c.sitesBy = { compiled: new Set(), uploaded: new Map(), fresh: new Set() });
    if (compiled) by.compiled.add(site);
    if (uploaded) by.uploaded.set(site, (by.uploaded.get(site) || 0) + bytes);
    if (fresh) by.fresh.add(site);
  }

  // --- records --------------------------------------------------------------

  // The record of hitch slot `s` (queued work item `w`: its camera), in
  // the after-frame task.
  hitchAt(s, census, w) {
    if (this.outbox.stopped) return;
    this.ownStep(K_RECORD);
    const ring = this.ring;
    const f = this.frameFacts(s, census);
    const frame = ring.frame[s], at = ring.end[s];
    f.loaf = !this.loafSupported ? 'unsupported' : f.frameMs < LOAF_MIN_MS ? 'short' : 'none';
    const cls = classifyFrame(f, { spawnBurst: this.spawnBurst });
    // only a hitch whose verdict is long-script waits for its script: a
    // compile with a long-script guess below it goes at once, with the
    // script if the entry is already in; a frame under 50 ms never gets
    // an entry and does not wait.  A waiting one meets the limit when
    // its script is known (resolvePending): the limit is per cause.
    const wantsScript = this.loafSupported && cls[0].guess === 'long-script' && f.frameMs >= LOAF_MIN_MS;
    if (!wantsScript && !this.hitchLimit.allow(at, limitKey(cls, f), f.frameMs)) return;
    const rec = {
      type: 'hitch', frame, frameMs: r1(f.frameMs),
      medianMs: Number.isFinite(f.medianMs) && !f.young ? r1(f.medianMs) : undefined,
      insideRenderMs: r1(f.insideMs), delta: f.delta,
      world: { spawned: census.spawned, removed: census.removed },
      minted: census.minted,
    };
    const sites = sitesFor(census, cls[0].guess);
    if (sites.length) rec.sites = sites;
    // the finds the pairs and the spawned objects come from: this frame's
    // census, or the frame before's when its stall is this frame (below)
    let mint = census, spawn = census;
    if (f.uploadBytes > 0) rec.uploadBytes = f.uploadBytes;
    if (f.recorderMs >= 0.1) rec.recorderMs = r1(f.recorderMs);
    if (f.resized) rec.resize = f.resized;
    if (f.young) rec.warmup = { frames: this.frameNo - this.baseFrame, needed: WARM_FRAMES };
    // the stall after a compile, an upload or a crowd is that work's: it
    // carries the sites of the frame before, so both are one footprint,
    // and that frame (`before`: what moved in it, where repro compares)
    const lf = /in the frame before/.test(cls[0].evidence) ? this.findsOf(frame - 1) : null;
    if (lf !== null) {
      const held = sitesFor(lf, cls[0].guess);
      if (held.length) rec.sites = held;
      if (lf.minted.length) { rec.minted = lf.minted; mint = lf; }
      if (cls[0].guess === 'spawn-burst') { spawn = lf; rec.world.spawned = lf.spawned; }
      rec.before = { frame: lf.frame, programs: lf.programs, textures: lf.textures, ...(lf.uploadBytes > 0 ? { uploadBytes: lf.uploadBytes } : {}),
        ...(lf.spawnedCount > 0 ? { spawned: lf.spawnedCount } : {}), delta: lf.delta };
    }
    if (spawn.spawnedCount > spawn.spawned.length) rec.world.spawnedCount = spawn.spawnedCount;
    if (census.removedCount > census.removed.length) rec.world.removedCount = census.removedCount;
    if (mint.mintedCount > mint.minted.length) rec.mintedCount = mint.mintedCount;
    // beside the names, what entity each is and where it was built
    // (identity.js); the names stay for the readers that know only them
    if (spawn.spawnedEntities && spawn.spawnedEntities.length === rec.world.spawned.length && rec.world.spawned.length)
      rec.world.spawnedEntities = spawn.spawnedEntities.map((e, i) => ({ name: rec.world.spawned[i], id: e.id, site: e.site }));
    const ids = mint.mintedIds || {};
    if (rec.minted.length && rec.minted.every((k) => ids[k]))
      rec.mintedEntities = rec.minted.map((k) => ({ minted: k, id: ids[k].id, site: ids[k].site }));
    if (this.workHasCam[w] === 1) {
      const c = this.workCam, o = w * CAM;
      const r2 = (v) => Math.round(v * 100) / 100, r3 = (v) => Math.round(v * 1000) / 1000;
      rec.world.camera = { position: [r2(c[o]), r2(c[o + 1]), r2(c[o + 2])],
        quaternion: [r3(c[o + 3]), r3(c[o + 4]), r3(c[o + 5]), r3(c[o + 6])] };
    }
    if (this.keysHeld.size) rec.world.inputsHeld = [...this.keysHeld];
    // the rest (its view, its script, its footprint, queued) in the task
    // after this one: a record whole is about half a millisecond of work
    this.finishing.push({ rec, f, cls, at, frame, wantsScript });
  }

  // A record's second half: its view snapshot, the script Long Animation
  // Frames named, then queued (or held for its script).
  finishRecord({ rec, f, cls, at, frame, wantsScript }) {
    if (this.outbox.stopped) return;
    this.ownStep(K_RECORD_END);
    const view = this.viewSnapshot(frame, rec, cls[0].guess);
    if (view !== null) { rec.snapshotRef = view.ref; this.sendSnapshot(view); }
    if (this.loafSupported && !wantsScript && cls.some((c) => c.guess === 'long-script')) {
      const script = this.findScript(at - f.frameMs, at, f);
      if (script) {
        f.script = script; f.loaf = 'found'; f.pageMs = script.pageMs;
        cls.splice(0, cls.length, ...classifyFrame(f, { spawnBurst: this.spawnBurst }));
        rec.script = script;
      }
    }
    if (cls.some((c) => c.guess === 'long-script')) {
      if (!this.loafSupported) rec.script = { unavailable: 'this browser has no Long Animation Frames API' };
      else if (f.loaf === 'short') rec.script = { unavailable: 'the Long Animation Frames API reports no frame under 50 ms' };
    }
    if (!wantsScript) { this.emit(rec, at, { cls }); return; }
    // The waiting hitch is not in the outbox yet: it is queued when its
    // script is known (or the wait ends), so nothing made meanwhile — a
    // shader compile's hitch, a heartbeat — waits behind it.  The wait
    // scales with the frame time (at 4 fps every frame outlasts a fixed
    // 250 ms), bounded.
    const level = Math.max(f.frameMs, Number.isFinite(f.medianMs) ? f.medianMs : 0);
    const waitMs = Math.min(Math.max(this.loafWaitMs, LOAF_WAIT_MAX_MS), Math.max(this.loafWaitMs, LOAF_WAIT_FRAMES * level));
    this.pending.push({ rec, f, at, from: at - f.frameMs, to: at, frame, deadline: now() + waitMs });
    this.resolvePending(false);
  }

  // What the ring knows of frame slot `s`, for the classifier.
  frameFacts(s, census = null) {
    const ring = this.ring;
    const p = (s - 1 + ring.capacity) % ring.capacity;
    const hasPrev = ring.count > 1;
    const delta = this.deltaOf(s);
    const frame = ring.frame[s];
    const lf = this.findsOf(frame - 1);
    const before = hasPrev ? { programs: ring.programs[p], textures: ring.textures[p], uploadBytes: lf ? lf.uploadBytes : 0,
      spawned: lf ? lf.spawnedCount : 0, calls: lf ? lf.delta.calls : 0 } : null;
    const f = { frameMs: ring.frameMs[s], insideMs: ring.insideMs[s], medianMs: this.medianMs, delta, before,
      spawned: census ? census.spawnedCount : ring.spawned[s], heapDropMb: this.heapDropMb,
      recorderMs: ring.selfMs[s], uploadBytes: census ? census.uploadBytes : 0,
      young: frame - this.baseFrame <= WARM_FRAMES && (ring.flags[s] & FLAG_RESIZE) === 0 };
    if ((ring.flags[s] & FLAG_RESIZE) !== 0 && this.lastResize === frame) {
      f.resized = { from: [this.resizeFrom0, this.resizeFrom1], to: [this.canvasW, this.canvasH] };
    }
    return f;
  }

  // What moved in frame slot `s`: against the frame before, draw calls and
  // triangles (the ring holds the frame's counts); programs, textures and
  // geometries as the renderer's memory counters moved in it.
  deltaOf(s) {
    const ring = this.ring;
    const p = (s - 1 + ring.capacity) % ring.capacity;
    const hasPrev = ring.count > 1;
    const delta = {
      calls: ring.calls[s] - (hasPrev ? ring.calls[p] : 0),
      triangles: ring.triangles[s] - (hasPrev ? ring.triangles[p] : 0),
      programs: ring.programs[s], textures: ring.textures[s], geometries: ring.geometries[s],
    };
    if (this.kind === 'webgpu') delete delta.programs;    // not measured there: absent, never 0
    return delta;
  }

  // The browser's entries, kept as plain objects read once: an entry's
  // fields are getters, and `scripts` is a new array on every read — the
  // wait for a hitch's script reads them every frame it waits.
  keepLoafs(entries) {
    for (const e of entries) {
      const scripts = [];
      for (const sc of e.scripts || []) {
        const k = { startTime: sc.startTime, duration: sc.duration, sourceFunctionName: sc.sourceFunctionName || '',
          sourceURL: sc.sourceURL || '', sourceCharPosition: sc.sourceCharPosition, invoker: sc.invoker || '',
          invokerType: sc.invokerType || '', own: false };
        k.own = this.isOwnScript(k);
        scripts.push(k);
      }
      this.loafs.push({ startTime: e.startTime, duration: e.duration, scripts });
      if (this.loafs.length > 16) this.loafs.shift();
    }
  }

  // Attach the Long Animation Frames script to waiting long-script
  // hitches and send them.  One stops waiting when its script is found;
  // when the browser has reported a frame that ends at or after it
  // (loafSettled); when LOAF_FRAMES frames have closed after its own — by
  // then the browser has made every entry it will for it (measured in the
  // demo, docs/recorder.md: by the second frame after, 13–40 ms after its
  // end, loaded or not); at its deadline (a few frame times, bounded: a
  // page that stopped rendering); or when `force`d (flush, stop).  A frame
  // of 50 ms or more with no entry over it when the wait ends had nothing
  // holding the main thread for 50 ms of it: its wait was outside the
  // page, whichever way the wait ended — one verdict, one footprint
  // (classifyFrame, loaf 'absent').
  resolvePending(force) {
    if (this.pending.length === 0) return;
    // entries the browser has made but whose observer callback has not
    // run yet (it is a task of its own, behind whatever the page does)
    if (this.observer) this.keepLoafs(this.observer.takeRecords());
    const t = now();
    const keep = [];
    let due = 0;
    for (const p of this.pending) {
      // The wait ends when the browser has said all it will of the frame
      // (an entry ending at or after it; or LOAF_FRAMES frames since), at
      // the deadline, or when forced — not at the first script found: an
      // entry over the start of the frame (the game's loop, a sliver of
      // it) comes before the one over the rest, and ending there named
      // the loop instead of the 250 ms callback that followed it.
      const framesOver = this.frameNo >= p.frame + LOAF_FRAMES;
      if (!force && t < p.deadline && !framesOver && !loafSettled(this.loafs, p.to)) {
        keep.push(p);
        if (due === 0 || p.frame + LOAF_FRAMES < due) due = p.frame + LOAF_FRAMES;
        continue;
      }
      const script = this.findScript(p.from, p.to, p.f);
      p.f.pageMs = this.loafPageMs(p.from, p.to, p.f.insideMs || 0);
      if (script) { p.f.script = script; p.f.loaf = 'found'; p.rec.script = script; }
      else if (!loafOverlaps(this.loafs, p.from, p.to)) {
        p.f.loaf = 'absent';
        p.rec.script = { unavailable: 'the browser made no Long Animation Frames entry for this frame: nothing held the main thread for 50 ms of it' };
      } else p.rec.script = { unavailable: 'the Long Animation Frames API named no script of the page for this frame' };
      const own = this.ownLoafMs(p.from, p.to);
      if (own >= 0.1 && !(p.rec.recorderMs >= own)) { p.rec.recorderMs = r1(own); p.f.recorderMs = own; }
      const cls = classifyFrame(p.f, { spawnBurst: this.spawnBurst });
      // the limit of one a second is per cause here: two different
      // scripts in one second are two causes, two records
      if (!this.hitchLimit.allow(p.at, limitKey(cls, p.f), p.f.frameMs)) continue;
      this.emit(p.rec, p.at, { cls });
    }
    this.pending = keep;
    this.loafDue = due;
    // none waits: the deadline's timer has nothing to do (and would keep
    // a stopped recorder's timer alive for the whole wait)
    if (keep.length === 0 && this.pendingTimer) { clearTimeout(this.pendingTimer); this.pendingTimer = null; }
    if (keep.length > 0 && !this.pendingTimer) {
      const wait = Math.max(0, Math.min(...keep.map((p) => p.deadline - t))) + 20;
      this.pendingTimer = setTimeout(() => {
        this.pendingTimer = null;
        this.ownBegin(K_PENDING); this.resolvePending(false); this.ownEnd();
      }, wait);
    }
  }

  // Is this Long Animation Frames script the recorder's own?  Its scripts
  // are never handed to the agent as a cause.
  isOwnScript(sc) {
    const u = String(sc.sourceURL || '');
    return u !== '' ? ownUrl(u) : ownUrl(String(sc.invoker || ''));
  }

  // The recorder's own script time the browser saw over (from, to].
  ownLoafMs(from, to) {
    let ms = 0;
    for (const e of this.loafs) {
      if (e.startTime > to || e.startTime + e.duration < from) continue;
      for (const sc of e.scripts) if (sc.own) ms += sc.duration;
    }
    return ms;
  }

  // The page's time in the frame outside render as the browser saw it:
  // how much of [from, to − inside] its Long Animation Frames entries
  // cover, less the recorder's own scripts there.  Entries never overlap
  // one another.  The rest of the frame no entry covers: nothing held the
  // main thread for 50 ms there, so it waited on something outside the
  // page (the GPU process, the compositor, the machine).
  loafPageMs(from, to, inside) {
    const end = to - inside;
    let ms = 0;
    for (const e of this.loafs) {
      const o = Math.min(e.startTime + e.duration, end) - Math.max(e.startTime, from);
      if (o <= 0) continue;
      ms += o;
      for (const sc of e.scripts) {
        if (!sc.own) continue;
        const so = Math.min(sc.startTime + sc.duration, end) - Math.max(sc.startTime, from);
        if (so > 0) ms -= so;
      }
    }
    return Math.max(0, ms);
  }

  // The page's longest script over the frame (from, to] — never the
  // recorder's — with how much of the frame's time outside render it
  // covered (`coveredMs`: a script that contains the frame's render, the
  // animation-frame callback that calls it, covers its own time less the
  // render's) and what share that is of the page's time there
  // (`pageMs`, loafPageMs: the time the browser's long frames cover).  The
  // share is over the page's time, not the whole frame: on a software
  // renderer a long frame is often followed by a wait outside the page
  // (the GPU process catching up) that no script of the page spent, and
  // the 254 ms crowd tick in a 450 ms frame is still what the page spent it
  // on.  The wait is said beside it (classifyFrame).
  findScript(from, to, f = null) {
    let best = null, bestCovered = -1;
    const inside = f ? f.insideMs || 0 : 0;
    const end = to - inside;
    for (const e of this.loafs) {
      if (e.startTime > to || e.startTime + e.duration < from) continue;
      for (const sc of e.scripts) {
        const s0 = sc.startTime, s1 = sc.startTime + sc.duration;
        if (s0 > to || s1 < from) continue;
        if (sc.own) continue;
        const covered = Math.max(0, Math.min(s1, end) - Math.max(s0, from));
        if (covered > bestCovered) { best = sc; bestCovered = covered; }
      }
    }
    if (!best) return null;
    const out = {
      name: best.sourceFunctionName || '', sourceURL: best.sourceURL || '',
      charPosition: typeof best.sourceCharPosition === 'number' ? best.sourceCharPosition : -1,
      invoker: best.invoker || '', invokerType: best.invokerType || '', durationMs: r1(best.duration),
    };
    if (f) {
      const page = Math.max(bestCovered, this.loafPageMs(from, to, inside));
      out.coveredMs = r1(bestCovered);
      out.pageMs = r1(page);
      out.share = page > 0 ? Math.round(Math.min(1, bestCovered / page) * 1000) / 1000 : 0;
    }
    return out;
  }

  onJitter(rec, t) {
    this.made.jitter++;
    this.emit(rec, t, {});
  }

  /*
   * The view snapshot of a hitch (seed §5, docs/attribute.md "A hitch
   * replayed"): the camera and the animation-frame time of the frames
   * from VIEW_BEFORE before the hitch's to the newest the ring holds, the
   * viewport and pixel ratio, and the visibility of the track()ed
   * entities now.  What `sloptimize repro` restores; `fidelity: "view"`
   * says what it is not (the game's own state).  null when the ring no
   * longer holds the first of those frames.
   */
  viewSnapshot(frame, rec, guess) {
    const frames = this.ring.viewAt(frame);
    if (frames === null) return null;
    const idn = pageIdentity();
    const cv = this.canvas;
    const r = this.renderer;
    const g = globalThis;
    const visibility = idn ? idn.trackedObjects(256).map((o) => ({ id: o.userData.sloptimize.id, visible: o.visible !== false })) : [];
    const cam = this.camera;
    return {
      v: 1, ref: `hitch-${this.outbox.pageId}-${frame}`, fidelity: 'view',
      page: g.location ? g.location.pathname : null, build: this.build ?? null,
      frame, before: VIEW_BEFORE, frames,
      viewport: {
        canvas: cv ? [cv.width, cv.height] : null,
        window: typeof g.innerWidth === 'number' ? [g.innerWidth, g.innerHeight] : null,
        pixelRatio: typeof r.getPixelRatio === 'function' ? r.getPixelRatio() : null,
        devicePixelRatio: typeof g.devicePixelRatio === 'number' ? g.devicePixelRatio : null,
      },
      cameraParented: !!(cam && cam.parent),
      visibility,
      hitch: { frameMs: rec.frameMs, delta: rec.delta, guess, ...(rec.before ? { before: { frame: rec.before.frame, delta: rec.before.delta } } : {}) },
    };
  }

  // Hand a view snapshot to the daemon (POST /snapshots) in a task of its
  // own, after the record's, when the page is idle (nothing waits on it:
  // the send's own cost must not land in a frame); a lost one is counted,
  // never retried (repro says it is missing).
  sendSnapshot(view) {
    const f = this.fetch;
    if (!f) { this.snapshots.failed++; this.snapshots.lastError = 'no fetch'; return; }
    const later = typeof requestIdleCallback === 'function' ? (fn) => requestIdleCallback(fn, { timeout: 2000 }) : (fn) => setTimeout(fn, 0);
    later(() => {
      const a = performance.now();
      let p;
      try {
        p = f(`${this.endpoint}/api/sloptimize/snapshots`, { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify(view) });
      } catch (e) {
        p = Promise.reject(e);
      }
      this.ownAdd(performance.now() - a, K_SNAPSHOT);
      p.then((res) => {
        if (res && res.ok) this.snapshots.sent++;
        else { this.snapshots.failed++; this.snapshots.lastError = `HTTP ${res ? res.status : '?'}`; }
      }, (e) => { this.snapshots.failed++; this.snapshots.lastError = String((e && e.message) || e); });
    });
  }

  // Stamp a record (at, phase, ctx, build, drops said, footprint) and queue it.
  emit(rec, t, { cls = null } = {}) {
    this.stamp(rec, t);
    if (cls) rec.classification = cls;
    const dropped = {};
    this.drops.hitch += this.hitchLimit.take();
    this.drops.jitter += this.motion.take();
    this.drops.delivery += this.outbox.takeDropped();
    let any = false;
    for (const k of ['hitch', 'jitter', 'delivery']) {
      if (this.drops[k] > 0) { dropped[k] = this.drops[k]; this.drops[k] = 0; any = true; }
    }
    if (any) {
      rec.dropped = dropped;
      for (const k in dropped) this.dropTotals[k] = (this.dropTotals[k] || 0) + dropped[k];
    }
    if (rec.type === 'hitch') this.made.hitch++;
    this.mint(rec);
    if (rec.type !== 'heartbeat') this.noteIncident(rec);
    const entry = this.outbox.push(rec);
    // made in the waking close (the game's task): sent at its end, for the
    // wake's latency; else in a task of its own, not added to this one
    this.outbox.kick(0, this.ownDepth > 0 && this.own[OWN_KIND] === K_CLOSE);
    this.changed();
    return entry;
  }

  // What every record carries: its time, phase, situation and build.
  stamp(rec, t) {
    rec.at = isoAt(t);
    if (this.phase !== undefined) rec.phase = this.phase;
    rec.ctx = this.ctx;
    if (this.build !== undefined) rec.build = this.build;
    // a WebGPURenderer's counters are not WebGL's: every record says whose
    if (this.kind === 'webgpu') rec.renderer = 'webgpu';
    for (const k in rec) if (rec[k] === undefined) delete rec[k];
  }

  mint(rec) {
    const key = footprintKey(rec);
    if (key !== null) rec.footprint = { v: FOOTPRINT_VERSION, id: footprintId(key), key };
  }

  noteIncident(rec) {
    const top = Array.isArray(rec.classification) ? rec.classification[0] : rec.worst?.[0]?.classification?.[0];
    this.incidents.push({ type: rec.type, at: rec.at, fp: rec.footprint?.id, key: rec.footprint?.key,
      verdict: top ? top.guess : undefined,
      value: rec.type === 'hitch' ? rec.frameMs : rec.type === 'jitter' ? rec.units : rec.worst?.[0]?.frameMs,
      unit: rec.type === 'jitter' ? 'units' : 'ms', note: rec.note });
    if (this.incidents.length > 50) this.incidents.shift();
  }

  heartbeat() {
    if (!this.recording) return;
    const t = now();
    const from = this.lastBeatEnd ?? -Infinity;
    const ring = this.ring;
    const frames = ring.gather('frameMs', from);
    if (frames === 0) return;           // no evidence, no record: the timeline shows a gap
    const last = ring.end[ring.back(0)];
    const seconds = (t - this.lastBeatAt) / 1000;
    this.lastBeatAt = t;
    const rec = this.beatRecord(ring, from, frames, seconds);
    this.lastBeatEnd = last;
    this.made.heartbeat++;
    // a census now and then keeps `spawned` about the frame it names: one
    // is started (sliced, in the after-frame tasks) unless one runs or
    // frames wait for one
    if (!this.cs.running && !this.cs.done && this.nWork === 0 && this.nCensusScenes > 0) {
      this.censusBegin(this.censusDone);
      this.queueWork();
    }
    // frames held while the panel was open are not the game's: said
    if (this.panelFrames > 0) { rec.held = { panel: this.panelFrames }; this.panelFrames = 0; }
    if (this.kind === 'webgpu') rec.measured = WEBGPU_MEASURED;
    // the recorder's own cost since the last heartbeat (docs/performance.md)
    const own = this.own;
    rec.recorder = { ms: r1(own[OWN_TOTAL] - this.ownAtBeat), renderMs: r1(own[OWN_RENDER] - this.renderAtBeat), maxTaskMs: r1(own[OWN_MAX]) };
    this.ownAtBeat = own[OWN_TOTAL];
    this.renderAtBeat = own[OWN_RENDER];
    this.emit(rec, t, {});
  }

  // A heartbeat's figures: `frames` of the ring's since `from`, over `seconds`.
  beatRecord(ring, from, frames, seconds) {
    const med = (field) => ring.median(field, from);
    return {
      type: 'heartbeat',
      regime: this.regime,
      window: { frames, seconds: Math.round(seconds * 100) / 100 },
      frame: { medianMs: r1(med('frameMs')), p95Ms: r1(ring.percentile('frameMs', 0.95, from)),
        insideRenderMs: r1(med('insideMs')), fps: r1(seconds > 0 ? frames / seconds : 0) },
      render: { calls: med('calls'), triangles: med('triangles'), points: med('points'), lines: med('lines') },
      memory: this.kind === 'webgpu' ? { geometries: this.memGeometries, textures: this.memTextures }
        : { geometries: this.memGeometries, textures: this.memTextures, programs: this.memPrograms },
    };
  }

  // The first heartbeat of play ran its code for the first time: past
  // 1 ms where the later ones take 0.4 (docs/performance.md).  One is made
  // here, in the game's load, from frames of a ring of its own, stamped,
  // keyed (as emit() keys one) and dropped: the next ones find their code
  // run once.
  warm() {
    const ring = new FrameRing(8);
    for (let k = 0; k < 8; k++) {
      const s = ring.slot();
      ring.end[s] = k * 16; ring.frameMs[s] = 16; ring.frame[s] = k;
      ring.commit();
    }
    const rec = this.beatRecord(ring, -Infinity, ring.gather('frameMs'), 0.128);
    rec.recorder = { ms: 0, renderMs: 0, maxTaskMs: 0 };
    this.stamp(rec, now());
    this.mint(rec);
  }

  // --- the host's verbs -----------------------------------------------------

  setPhase(phase) {
    this.phase = phase === undefined || phase === null || phase === '' ? undefined : String(phase);
  }

  track(name, get, { follows = null, reach = null } = {}) {
    if (typeof name !== 'string' || name === '') throw new TypeError('track: a name is a non-empty string');
    if (typeof get !== 'function') throw new TypeError('track: the second argument returns the point ({x,y,z} or [x,y,z])');
    let reachName = null, reachGet = null;
    if (typeof reach === 'function') { reachName = 'reach'; reachGet = reach; }
    else if (reach && typeof reach.get === 'function') { reachName = String(reach.name || 'reach'); reachGet = reach.get; }
    if (reachGet) this.hasReach = true;
    if (name === 'camera' && this.autoCam >= 0) {
      // the game names its camera itself: its getter replaces the automatic one
      const k = this.autoCam, t = this.motion.tracks[k];
      t.follows = follows; t.reachName = reachName;
      this.trackGet[k] = get;
      this.trackReach[k] = reachGet;
      this.autoCam = -2;
      this.motion.cutAt(k);
      return;
    }
    this.motion.addTrack(name, { follows, reachName });
    this.trackGet.push(get);
    this.trackReach.push(reachGet);
    this.growTracks();
  }

  // The per-track typed arrays, one longer.
  growTracks() {
    const pos = new Float64Array(3 * this.trackGet.length);
    pos.set(this.pos);
    this.pos = pos;
    const rch = new Float64Array(this.trackGet.length).fill(NaN);
    rch.set(this.reach);
    this.reach = rch;
    const hf = new Uint8Array(this.trackGet.length), cf = new Uint8Array(this.trackGet.length);
    hf.set(this.holdFlag); cf.set(this.cutFlag);
    this.holdFlag = hf; this.cutFlag = cf;
  }

  hold(name) {
    if (name === undefined || name === null) this.holdAll = true;
    else { const k = this.trackIndex(name); if (k >= 0) this.holdFlag[k] = 1; }
    this.anyHold = true;
  }

  cut(name) {
    if (name === undefined || name === null) this.cutAll = true;
    else { const k = this.trackIndex(name); if (k >= 0) this.cutFlag[k] = 1; }
    this.anyHold = true;
  }

  trackIndex(name) {
    const t = this.motion.byName.get(typeof name === 'string' ? name : String(name));
    return t ? t.index : -1;
  }

  usermark({ windowMs = 5000, note, inputsHeld, world } = {}, { hold = false } = {}) {
    if (this.workQueued || this.nWork > 0) this.runWork(Infinity);    // the frames' spawned counts
    const t = now();
    const ring = this.ring;
    const from = t - windowMs;
    const frames = ring.gather('frameMs', from);
    const rec = { type: 'usermark', frame: this.frameNo, windowMs, frames };
    if (frames > 0) {
      rec.medianMs = r1(ring.median('frameMs', from));
      rec.p95Ms = r1(ring.percentile('frameMs', 0.95, from));
    }
    if (note !== undefined && note !== null && note !== '') rec.note = String(note).slice(0, 500);
    const held = inputsHeld || (this.keysHeld.size ? [...this.keysHeld].filter((k) => !/^(Control|F11)/.test(k)) : null);
    if (held && held.length) rec.inputsHeld = held;
    if (world && typeof world === 'object') rec.world = world;
    // the five worst unpaused frames of the window, ranked
    const slots = [];
    for (let i = 0; i < ring.count; i++) {
      const s = ring.back(i);
      if (ring.end[s] <= from) break;
      if (ring.flags[s] & FLAG_PAUSED) continue;
      slots.push(s);
    }
    slots.sort((a, b) => ring.frameMs[b] - ring.frameMs[a]);
    rec.worst = slots.slice(0, 5).map((s) => {
      const f = this.frameFacts(s);
      f.loaf = this.loafSupported ? 'none' : 'unsupported';
      const script = this.loafSupported ? this.findScript(ring.end[s] - ring.frameMs[s], ring.end[s]) : null;
      if (script) { f.script = script; f.loaf = 'found'; }
      return { frame: ring.frame[s], frameMs: r1(f.frameMs), insideRenderMs: r1(f.insideMs), delta: f.delta,
        classification: classifyFrame(f, { spawnBurst: this.spawnBurst }) };
    });
    this.hitchLimit.charge();
    this.made.usermark++;
    // Ctrl+F11 asks for a note first: the record is made now (its window
    // is the five seconds before the press) and sent with the note
    if (hold) return { rec, t };
    this.emit(rec, t, {});
    this.confirm(rec);
    return { footprint: rec.footprint, frames, worst: rec.worst.length };
  }

  // The chord: a small box in the page asks for an optional note (Enter
  // sends, Esc sends without one, 30 s of nothing too).  Keys typed there
  // never reach the game: the recorder's capture listener on window runs
  // before any of the game's and stops them (onKeyDown); a keyup goes on,
  // so the game never keeps a key it saw pressed.
  askForNote() {
    if (this.noteBox) return;
    const held = this.usermark({}, { hold: true });
    if (!this.askNote || typeof document === 'undefined' || !document.body) {
      this.emit(held.rec, held.t, {});
      this.confirm(held.rec);
      return;
    }
    const box = document.createElement('div');
    box.className = 'sloptimize-usermark-note';
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', 'sloptimize: a note for this mark');
    box.style.cssText = 'position:fixed;left:50%;bottom:24px;transform:translateX(-50%);z-index:2147483647;' +
      'box-sizing:border-box;max-width:calc(100vw - 16px);width:420px;background:rgba(13,17,23,.96);color:#e6edf3;' +
      'font:13px/1.4 system-ui,sans-serif;padding:8px 10px;border-radius:6px;border:1px solid #30363d';
    const label = document.createElement('label');
    label.textContent = 'sloptimize: what felt wrong? (Enter sends, Esc skips)';
    label.style.cssText = 'display:block;margin:0 0 4px';
    const input = document.createElement('input');
    input.type = 'text';
    input.maxLength = 500;
    input.style.cssText = 'box-sizing:border-box;width:100%;font:inherit;padding:4px 6px;background:#0d1117;color:#e6edf3;' +
      'border:1px solid #30363d;border-radius:4px';
    label.appendChild(input);
    box.appendChild(label);
    document.body.appendChild(box);
    this.noteBox = { box, input, held, prevFocus: document.activeElement,
      timer: setTimeout(() => this.noteSend(false), 30000) };
    // a pointer-locked game keeps the mouse; the keyboard comes here
    try { input.focus({ preventScroll: true }); } catch { /* not focusable */ }
  }

  noteSend(withNote) {
    const nb = this.noteBox;
    if (!nb) return;
    this.noteBox = null;
    clearTimeout(nb.timer);
    const note = withNote ? nb.input.value.trim() : '';
    if (note) nb.held.rec.note = note.slice(0, 500);
    nb.box.remove();
    const p = nb.prevFocus;
    if (p && p.isConnected && typeof p.focus === 'function') { try { p.focus({ preventScroll: true }); } catch { /* gone */ } }
    if (!this.recording && this.outbox.stopped) return;
    this.emit(nb.held.rec, nb.held.t, {});
    this.confirm(nb.held.rec);
  }

  // One line on screen: the press was heard and what it kept.
  confirm(rec) {
    if (!this.confirmOn || typeof document === 'undefined' || !document.body) return;
    if (!this.toast) {
      const el = document.createElement('div');
      el.className = 'sloptimize-usermark-toast';
      el.setAttribute('role', 'status');
      el.style.cssText = 'position:fixed;left:50%;bottom:24px;transform:translateX(-50%);z-index:2147483646;' +
        'background:rgba(13,17,23,.92);color:#e6edf3;font:13px/1.4 system-ui,sans-serif;padding:6px 12px;' +
        'border-radius:6px;border:1px solid #30363d;pointer-events:none;box-sizing:border-box;' +
        'max-width:calc(100vw - 16px);white-space:normal;overflow-wrap:anywhere;text-align:center';
      this.toast = el;
    }
    const w = rec.worst[0];
    this.toast.textContent = `sloptimize: marked the last ${r1(rec.windowMs / 1000)} s — ${rec.frames} frames` +
      `${rec.p95Ms !== undefined ? `, p95 ${rec.p95Ms} ms` : ''}${w ? `, worst ${w.frameMs} ms (${w.classification[0].guess})` : ''}` +
      `${rec.footprint ? ` · fp ${rec.footprint.id}` : ''}`;
    if (!this.toast.isConnected) document.body.appendChild(this.toast);
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => this.toast.remove(), CONFIRM_MS);
  }

  async flush() {
    if (this.workQueued || this.nWork > 0 || this.cs.running) this.runWork(Infinity);
    if (this.noteBox) this.noteSend(false);
    // a long-script hitch still waiting for its script goes as it is
    if (this.pending.length) {
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(this.loafWaitMs, ...this.pending.map((p) => p.deadline - now())))));
      this.resolvePending(true);
    }
    await this.outbox.flush();
    return this.state();
  }

  stop() {
    if (!this.recording) return;
    this.recording = false;
    if (this.renderer.render === this.wrapper) this.renderer.render = this.original;
    if (this.raf !== undefined && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(this.raf);
    clearInterval(this.ctxTimer);
    clearInterval(this.beatTimer);
    if (typeof window !== 'undefined') {
      window.removeEventListener('keydown', this.onKeyDown, true);
      window.removeEventListener('keyup', this.onKeyUp, true);
      window.removeEventListener('keypress', this.onKeyPress, true);
      window.removeEventListener('blur', this.onBlur);
      window.removeEventListener('pagehide', this.onPageHide);
      document.removeEventListener('visibilitychange', this.onHide);
    }
    if (this.observer) this.observer.disconnect();
    // a task later, after any hitch of the last frames is made (they are
    // made a task after their frame): send everything, then stop; what the
    // daemon would not take goes with the browser's beacon
    if (this.noteBox) this.noteSend(false);
    if (this.panelObserver) this.panelObserver.disconnect();
    setTimeout(() => {
      this.runWork(Infinity);
      this.resolvePending(true);
      this.outbox.flush().then(() => {
        if (this.outbox.queued() > 0) this.outbox.beacon();
        this.outbox.stop();
        this.fetch?.close?.();
        this.changed();
      });
    }, 0);
    if (globalThis[REGISTRY] === this.api) delete globalThis[REGISTRY];
    this.changed();
  }

  // --- state for the panel --------------------------------------------------

  get medianMs() { return this.fr[FR_MEDIAN]; }

  state() {
    const o = this.outbox.status();
    return {
      recording: this.recording, endpoint: this.endpoint || '(same origin)', build: this.build ?? null,
      phase: this.phase ?? null, ctx: this.ctx, regime: this.regime, frames: this.frameNo,
      medianMs: Number.isFinite(this.medianMs) ? r1(this.medianMs) : null,
      made: { ...this.made }, sent: o.sent, queued: o.queued, held: this.pending.length,
      dropped: { ...this.dropTotals, delivery: o.dropped }, refused: o.refused, lastRefusal: o.lastRefusal,
      reachable: o.reachable, lastError: o.lastError, lastSentAt: o.lastSentAt, backoffMs: o.backoffMs,
      loaf: this.loafSupported, censuses: this.censuses, incidents: this.incidents.slice(-20),
      renderer: this.kind, panelOpen: this.panelOpen, heldPanelFrames: this.panelFramesTotal,
      own: { ms: r1(this.own[OWN_TOTAL]), renderMs: r1(this.own[OWN_RENDER]), loadMs: r1(this.loadMs),
        maxTaskMs: r1(this.own[OWN_MAX]), tasks: this.own[OWN_TASKS],
        maxTaskKind: this.own[OWN_TASKS] > 0 ? OWN_KINDS[this.own[OWN_MAX_KIND]] : null,
        over1ms: this.ownLong, long: this.ownLongLast.map((t) => ({ ...t })), deferredWakes: this.deferredWakes,
        byKind: this.ownByKind(),
        // all in: its tasks and the render wrapper's own time
        msPerFrame: this.frameNo > 0 ? Math.round(((this.own[OWN_TOTAL] + this.own[OWN_RENDER]) / this.frameNo) * 1000) / 1000 : null },
      noteOpen: !!this.noteBox,
      snapshots: { ...this.snapshots },
      // where records are sent from: a worker, or the page's own thread and why
      sender: this.fetch?.mode ? { ...this.fetch.mode } : { offThread: false, why: 'the host gave its own fetch' },
      ...(this.kind === 'webgpu' ? { measured: WEBGPU_MEASURED } : {}),
      // stop() has made its last records and handed them on (sent, or to
      // the browser's beacon): nothing more will be sent
      stopped: !!this.outbox.stopped,
    };
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed() {
    for (const fn of this.listeners) { try { fn(); } catch { /* a listener's bug is its own */ } }
  }
}

/*
 * createRecorder(options) → the recorder's verbs.  Options: renderer
 * (required), endpoint ('' = same origin), build, budgetFrameMs (16.7),
 * context (() => facets), usermarkKey ('Control+F11').  docs/recorder.md.
 */
export function createRecorder(options = {}) {
  const r = new Recorder(options);
  return r.api;
}

Object.defineProperty(Recorder.prototype, 'api', {
  get() {
    if (!this._api) {
      const r = this;
      this._api = Object.freeze({
        setPhase: (p) => r.setPhase(p),
        track: (name, get, opts) => r.track(name, get, opts),
        hold: (name) => r.hold(name),
        cut: (name) => r.cut(name),
        usermark: (o) => r.usermark(o),
        flush: () => r.flush(),
        stop: () => r.stop(),
        state: () => r.state(),
        subscribe: (fn) => r.subscribe(fn),
      });
    }
    return this._api;
  },
});
