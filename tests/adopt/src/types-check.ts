// Compile-time checks of the page-side types (tsc -p tsconfig.app.json);
// not loaded by any page.  Each @ts-expect-error must be an error, or tsc
// fails ("unused directive"): the declarations are checked, not `any`.
import * as THREE from 'three';
import { createRecorder as rootCreateRecorder } from 'sloptimize';
import { createRecorder, canonicalContext, type Recorder, type RecorderState, type UsermarkResult } from 'sloptimize/recorder';
import { createPanel, type Panel } from 'sloptimize/panel';
import { buildIssues, parseJsonl, footprintId, type IssuesDocument } from 'sloptimize/fold';

const renderer = new THREE.WebGLRenderer();
const rec: Recorder = createRecorder({ renderer, build: 'v1', budgetFrameMs: 16.7, context: () => ({ view: 'top', squad: 2, boss: null }) });
export const same: typeof createRecorder = rootCreateRecorder;
const st: RecorderState = rec.state();
export const reachable: boolean | null = st.reachable;
export const median: number | null = st.medianMs;
export const hitches: number = st.made.hitch;
export const ctx: string = canonicalContext({ b: 1, a: 'x' }) + canonicalContext(new Map([['k', 'v']]));
rec.track('camera', () => [0, 1, 2], { follows: 'player', reach: { name: 'boom', get: () => 4 } });
rec.hold('camera');
rec.cut();
const u: UsermarkResult = rec.usermark({ note: 'felt wrong', windowMs: 3000 });
export const fp: string | undefined = u.footprint?.id;
export const done: Promise<RecorderState> = rec.flush();
export const off: () => void = rec.subscribe(() => {});
const g = globalThis.sloptimize;
export const fromBootstrap: Recorder | undefined = g?.createRecorder({ renderer, build: 'v2' });
export const current: Recorder | null | undefined = g?.rec;
const enemy = new THREE.Group();
export const named: THREE.Group | undefined = g?.track(enemy, 'enemy_17');
g?.scene('arena', async (ctx) => { await ctx.frames(2); return { renderer, settleFrames: 2 }; });
g?.scene('from-url');
export const realMs: number | undefined = g?.realNow();
const panel: Panel = createPanel({ endpoint: 'http://127.0.0.1:7567', tab: 'issues', hotkey: false });
panel.open();
const doc: IssuesDocument = buildIssues(parseJsonl('{"type":"heartbeat"}\n').records, { now: 0 });
export const first: string | undefined = doc.issues[0]?.status;
export const id: string = footprintId('hitch|play|-|-|ctx:');

// @ts-expect-error: a recorder needs a renderer
createRecorder({});
// @ts-expect-error: a renderer has render()
createRecorder({ renderer: {} });
// @ts-expect-error: setPhase takes a name
rec.setPhase(42);
// @ts-expect-error: a tracked point is {x, y, z} or [x, y, z]
rec.track('bad', () => 'here');
// @ts-expect-error: the situation's facets are scalars
createRecorder({ renderer, context: () => ({ where: { x: 1 } }) });
// @ts-expect-error: globalThis.sloptimize is absent outside the dev server
globalThis.sloptimize.createRecorder({ renderer });
// @ts-expect-error: track() names a three.js object, not a plain one
g?.track({ position: [0, 0, 0] }, 'enemy_18');
// @ts-expect-error: the id is a string
g?.track(enemy, 17);
// @ts-expect-error: a scene's name is a string
g?.scene(3, () => ({ renderer }));
// @ts-expect-error: settleFrames is a number of frames
g?.scene('arena', () => ({ renderer, settleFrames: 'two' }));
// @ts-expect-error: no such tab
createPanel({ tab: 'graphs' });
// @ts-expect-error: the state is read, not written
rec.state = () => st;
