//# allFunctionsCalledOnLoad
// census.js — the static census of a scene (seed §4.1, DESIGN §16,
// docs/attribute.md): what the scene holds, by entity, and the hints a
// walk can honestly give, each with its evidence and a fix naming the
// site that built it.  Nothing here renders or measures time: draw calls
// are a runtime fact (`calls: null`); texture bytes are an estimate and
// named so.
//
//   const doc = takeCensus([scene], { renderer, identity, g: globalThis });
//
// Never imports three (three's constants by value).  Injected as a
// classic script too (bench.js's rule): no import lines, exports only
// `export function` / `export const`.

export const CENSUS_VERSION = 1;
export const CENSUS_HINTS = Object.freeze(['instancing-candidate', 'material-dedup-candidate', 'shadow-caster-light',
  'undisposed-suspect', 'oversized-texture', 'uncapped-pixel-ratio']);
export const INSTANCING_MIN = 10;     // meshes sharing a geometry and material before instancing is worth it
export const TEXTURE_MAX_SIDE = 2048; // larger on a side: oversized (most screens never sample its top mip)
export const PIXEL_RATIO_CAP = 1.5;   // a ratio above this draws ≥ 1.8× the pixels of 1.5 for little visible gain
export const CENSUS_MAX_ENTITIES = 200;

// Bytes per texel of three's formats and types (three's constants, by value:
// the runtime never imports three).  Unknown: 4 (RGBA8).
const FORMAT_CHANNELS = { 1021: 1, 1022: 3, 1023: 4, 1026: 1, 1027: 1, 1028: 1, 1029: 1, 1030: 2, 1031: 2, 1032: 3, 1033: 4 };
const TYPE_BYTES = { 1009: 1, 1010: 1, 1011: 2, 1012: 2, 1013: 4, 1014: 4, 1015: 4, 1016: 2, 1017: 2, 1018: 2, 1019: 2, 1020: 4 };

function texSize(tex) {
  let img = tex && tex.image, faces = 1;
  if (Array.isArray(img)) { faces = img.length; img = img[0]; }
  if (!img) return null;
  const w = img.width || img.videoWidth || img.naturalWidth || 0;
  const h = img.height || img.videoHeight || img.naturalHeight || 0;
  return w > 0 && h > 0 ? { w, h, depth: img.depth || 1, faces } : null;
}

// An estimate of what a texture's first upload sent: width × height ×
// depth × bytes per texel, × 4/3 with mipmaps, × 6 for a cube; a
// compressed one by its mipmaps' data.  0 when nothing tells its size.
export function textureBytes(tex) {
  try {
    if (tex.isCompressedTexture && Array.isArray(tex.mipmaps)) {
      let n = 0;
      for (const m of tex.mipmaps) n += m && m.data ? m.data.byteLength || 0 : 0;
      return n;
    }
    const s = texSize(tex);
    if (!s) return 0;
    const texel = (FORMAT_CHANNELS[tex.format] || 4) * (TYPE_BYTES[tex.type] || 1);
    const mips = tex.generateMipmaps !== false && tex.minFilter !== 1006 && tex.minFilter !== 1003 ? 4 / 3 : 1;
    return Math.round(s.w * s.h * s.depth * texel * s.faces * mips);
  } catch { return 0; }
}

// The census's estimate: a compressed texture (KTX2/basis) counted as if
// decoded to RGBA8 with mipmaps — what a browser without the GPU format
// holds — and labelled so by the caller.
function textureEstimate(tex) {
  if (tex.isCompressedTexture) {
    const m0 = Array.isArray(tex.mipmaps) ? tex.mipmaps[0] : null;
    const w = (m0 && m0.width) || (tex.image && tex.image.width) || 0, h = (m0 && m0.height) || (tex.image && tex.image.height) || 0;
    return Math.round(w * h * 4 * (Array.isArray(tex.mipmaps) && tex.mipmaps.length > 1 ? 4 / 3 : 1));
  }
  return textureBytes(tex);
}

export const TEXTURE_SLOTS = ['map', 'normalMap', 'roughnessMap', 'metalnessMap', 'emissiveMap', 'aoMap', 'alphaMap',
  'bumpMap', 'envMap', 'lightMap', 'displacementMap', 'specularMap', 'gradientMap', 'matcap',
  'clearcoatMap', 'clearcoatNormalMap', 'clearcoatRoughnessMap', 'sheenColorMap', 'sheenRoughnessMap',
  'transmissionMap', 'thicknessMap', 'iridescenceMap', 'anisotropyMap', 'specularColorMap', 'specularIntensityMap'];

function texturesOf(m, into) {
  for (let i = 0; i < TEXTURE_SLOTS.length; i++) {
    const t = m[TEXTURE_SLOTS[i]];
    if (t && t.isTexture) into.add(t);
  }
  const u = m.uniforms;
  if (u && typeof u === 'object')
    for (const k in u) { const t = u[k] && u[k].value; if (t && t.isTexture) into.add(t); }
}

// Triangles one draw of a mesh makes (its draw range, ×instances).
function trianglesOf(o) {
  const g = o.geometry;
  if (!g || !g.attributes) return 0;
  const idx = g.index, pos = g.attributes.position;
  let n = idx ? idx.count : pos ? pos.count : 0;
  const dr = g.drawRange;
  if (dr && Number.isFinite(dr.count)) n = Math.min(n, dr.count);
  const tris = Math.floor(n / 3);
  return o.isInstancedMesh ? tris * (Number.isFinite(o.count) ? o.count : 1) : tris;
}

const SKIP_KEYS = new Set(['uuid', 'id', 'name', 'userData', 'version', 'uniforms', 'uniformsGroups']);
// A material's parameters as a string: equal strings, identical looks.
// Colours and vectors by value, textures by identity, a function by
// identity (an onBeforeCompile makes a material its own).  null for a
// ShaderMaterial: its uniforms are the game's own, not compared here.
export function materialSignature(m, fnIds = new Map()) {
  if (!m || m.isShaderMaterial || m.uniforms) return null;
  const parts = [];
  const keys = [];
  for (const k in m) if (!SKIP_KEYS.has(k) && k[0] !== '_') keys.push(k);
  keys.sort();
  for (const k of keys) {
    const v = m[k];
    let s;
    if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') s = String(v);
    else if (typeof v === 'function') {
      if (!Object.prototype.hasOwnProperty.call(m, k)) continue;
      if (!fnIds.has(v)) fnIds.set(v, fnIds.size);
      s = `f${fnIds.get(v)}`;
    } else if (v.isColor) s = `c${v.r},${v.g},${v.b}`;
    else if (v.isVector2 || v.isVector3 || v.isVector4 || v.isEuler || v.isQuaternion) s = `v${v.x},${v.y},${v.z},${v.w}`;
    else if (v.isTexture) s = `t${v.id}`;
    else { try { s = JSON.stringify(v); } catch { s = '?'; } }
    parts.push(`${k}=${s}`);
  }
  return parts.join(';');
}

const label = (x, fallback) => (x && (x.name || x.type)) || fallback;
const most = (counts) => {
  let best = null, n = -1;
  for (const [k, c] of counts) if (c > n || (c === n && k !== 'unknown' && best === 'unknown')) { best = k; n = c; }
  return best;
};
const bump = (map, k, by = 1) => map.set(k, (map.get(k) || 0) + by);
const MB = (b) => Math.round(b / 1048576 * 10) / 10;

/*
 * takeCensus(roots, {renderer, identity, g}) → the census document
 * (schemas/census.json, less what the CLI adds: at, scene, url, browser).
 * roots: the scenes the renderer drew (a walk starts at each); identity:
 * installIdentity()'s (sites, assets), or null (every site "unknown");
 * rootsOut: a Map to fill with each listed entity's id → its root objects.
 */
export function takeCensus(roots, { renderer = null, identity = null, g = globalThis, rootsOut = null } = {}) {
  const siteOf = identity ? (o) => identity.siteOf(o) : () => 'unknown';
  const assets = identity && identity.assets ? identity.assets : null;
  const cache = new WeakMap();
  const geometries = new Set(), materials = new Set(), textures = new Set(), meshesOf = new Map();
  const groups = new Map();            // geometry → Map(material key → group)
  const entities = new Map();          // root object → entity
  const texUsers = new Map();          // texture → Map(site → meshes)
  const matUsers = new Map();          // material → Map(site → meshes)
  const lights = [];
  let meshes = 0, triangles = 0, hidden = 0, casters = 0, objects = 0, unknownSites = 0, knownSites = 0;

  const stack = [], vis = [], ent = [], top = [];
  for (const r of roots) {
    if (!r) continue;
    const ch = r.children || [];
    for (let i = ch.length - 1; i >= 0; i--) { stack.push(ch[i]); vis.push(r.visible !== false); ent.push(null); top.push(true); }
  }
  while (stack.length) {
    const o = stack.pop(), pv = vis.pop(), isTop = top.pop();
    let e = ent.pop();
    if (!o) continue;
    objects++;
    const v = pv && o.visible !== false;
    // an entity: what the game named (track), what a loader delivered,
    // else each object directly under the scene
    if (isTop || (trackedOn(o)) || (assets && assets.has(o))) {
      e = entities.get(o);
      if (!e) {
        e = { root: o, meshes: 0, triangles: 0, materials: new Set(), geometries: new Set(), textures: new Set(),
          castShadow: false, visible: v, groups: new Map() };
        entities.set(o, e);
      }
    }
    if (o.isLight && o.castShadow) lights.push({ o, visible: v });
    if (o.isMesh) {
      meshes++;
      if (!v) hidden++;
      const tris = trianglesOf(o);
      triangles += tris;
      const site = siteOf(o);
      if (site === 'unknown') unknownSites++; else knownSites++;
      if (o.castShadow && v) casters++;
      if (o.geometry) geometries.add(o.geometry);
      const mats = Array.isArray(o.material) ? o.material : o.material ? [o.material] : [];
      const texSet = new Set();
      for (const m of mats) {
        materials.add(m);
        texturesOf(m, texSet);
        const mu = matUsers.get(m) || new Map();
        bump(mu, site);
        matUsers.set(m, mu);
      }
      for (const t of texSet) {
        textures.add(t);
        const tu = texUsers.get(t) || new Map();
        bump(tu, site);
        texUsers.set(t, tu);
      }
      // the geometry+material group (what one InstancedMesh could draw)
      const key = mats.map((m) => m.id).join('+');
      let byMat = groups.get(o.geometry);
      if (!byMat) groups.set(o.geometry, (byMat = new Map()));
      let grp = byMat.get(key);
      if (!grp) byMat.set(key, (grp = { geometry: o.geometry, mats, meshes: 0, instanced: 0, instances: 0, drawsEach: 1,
        triangles: 0, sites: new Map(), entities: new Map(), visible: 0 }));
      grp.meshes++;
      if (v) grp.visible++;
      if (o.isInstancedMesh) { grp.instanced++; grp.instances += Number.isFinite(o.count) ? o.count : 0; }
      const gg = o.geometry && Array.isArray(o.geometry.groups) && o.geometry.groups.length && mats.length > 1 ? o.geometry.groups.length : 1;
      grp.drawsEach = gg;
      grp.triangles += tris;
      bump(grp.sites, site);
      if (e) {
        e.meshes++;
        e.triangles += tris;
        for (const m of mats) e.materials.add(m);
        if (o.geometry) e.geometries.add(o.geometry);
        for (const t of texSet) e.textures.add(t);
        if (o.castShadow) e.castShadow = true;
        bump(grp.entities, e.root);
        const eg = e.groups.get(grp) || { n: 0 };
        eg.n++;
        e.groups.set(grp, eg);
      }
    }
    const ch = o.children;
    if (ch) for (let i = ch.length - 1; i >= 0; i--) { stack.push(ch[i]); vis.push(v); ent.push(e); top.push(false); }
  }

  function trackedOn(o) {
    const u = o.userData;
    return !!(u && u.sloptimize && typeof u.sloptimize.id === 'string' && u.sloptimize.id);
  }
  const idOf = (o) => (identity && identity.entityId ? identity.entityId(o, cache) : { id: `${o.name || o.type}`, via: 'name' });

  // --- totals ---------------------------------------------------------------
  let texBytes = 0, compressed = 0;
  for (const t of textures) { texBytes += textureEstimate(t); if (t.isCompressedTexture) compressed++; }
  const totals = {
    objects, meshes, hiddenMeshes: hidden, triangles, materials: materials.size, geometries: geometries.size,
    textures: textures.size, textureBytesEstimate: texBytes, calls: null, shadowCasters: casters,
    shadowCastingLights: lights.length,
  };
  if (compressed) totals.compressedTextures = compressed;

  // --- entities, by id (two roots with one id are one entity) ---------------
  const byId = new Map();
  const entityIdOf = new Map();
  for (const e of entities.values()) {
    const who = idOf(e.root);
    entityIdOf.set(e.root, who.id);
    let x = byId.get(who.id);
    if (!x) {
      x = { id: who.id, via: who.via, site: siteOf(e.root), objects: 0, meshes: 0, triangles: 0, materials: new Set(),
        geometries: new Set(), textures: new Set(), groups: new Map(), castShadow: false, visible: false, roots: [] };
      byId.set(who.id, x);
    }
    x.objects++;
    x.roots.push(e.root);
    x.meshes += e.meshes; x.triangles += e.triangles;
    for (const m of e.materials) x.materials.add(m);
    for (const gm of e.geometries) x.geometries.add(gm);
    for (const t of e.textures) x.textures.add(t);
    for (const [grp, eg] of e.groups) x.groups.set(grp, (x.groups.get(grp) || 0) + eg.n);
    x.castShadow = x.castShadow || e.castShadow;
    x.visible = x.visible || e.visible;
  }
  const list = [...byId.values()].filter((x) => x.meshes > 0).sort((a, b) => b.triangles - a.triangles || b.meshes - a.meshes || (a.id < b.id ? -1 : 1));
  // the objects of each entity, for a caller that hides them (bench.js's
  // bisection): not in the document, which is JSON
  if (rootsOut) for (const x of list) rootsOut.set(x.id, x.roots);
  const entitiesOut = list.slice(0, CENSUS_MAX_ENTITIES).map((x) => {
    let tb = 0;
    for (const t of x.textures) tb += textureEstimate(t);
    const out = {
      id: x.id, via: x.via, site: x.site, objects: x.objects, meshes: x.meshes, triangles: x.triangles,
      materials: x.materials.size, geometries: x.geometries.size,
      groups: [...x.groups].filter(([grp, n]) => n > 1 || grp.instanced > 0).sort((a, b) => b[1] - a[1]).slice(0, 8)
        .map(([grp, n]) => ({ geometry: label(grp.geometry, 'BufferGeometry'), material: grp.mats.map((m) => label(m, 'Material')).join('+'),
          meshes: n, instanced: grp.instanced > 0 })),
      textureBytesEstimate: tb, castShadow: x.castShadow, visible: x.visible,
    };
    if (x.site === 'unknown') out.advice = `built before sloptimize could see it: sloptimize.track(object, '${x.id.startsWith('auto:') ? 'a-name' : x.id}') where it is made names it and its site`;
    return out;
  });

  // --- hints ----------------------------------------------------------------
  const hints = [];
  const entitiesIn = (m) => [...m.keys()].map((r) => entityIdOf.get(r)).filter(Boolean).slice(0, 5);
  const fixAt = (site, what) => (site && site !== 'unknown' ? `${what} at ${site}` : `${what} (site unknown: sloptimize.track() the objects where they are made to name it)`);

  for (const byMat of groups.values()) {
    for (const grp of byMat.values()) {
      const plain = grp.meshes - grp.instanced;
      if (plain < INSTANCING_MIN || grp.visible < INSTANCING_MIN) continue;
      const site = most(grp.sites);
      const before = grp.visible * grp.drawsEach, after = grp.drawsEach;
      hints.push({
        kind: 'instancing-candidate',
        site,
        evidence: { meshes: plain, visibleMeshes: grp.visible, geometry: label(grp.geometry, 'BufferGeometry'),
          material: grp.mats.map((m) => label(m, 'Material')).join('+'), trianglesEach: grp.meshes ? Math.round(grp.triangles / grp.meshes) : 0,
          sites: [...grp.sites].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([s, n]) => ({ site: s, meshes: n })) },
        estimate: { callsBefore: before, callsAfter: after, basis: 'one draw per visible mesh per material group, main pass only (frustum culling and shadow passes change both)' },
        entities: entitiesIn(grp.entities),
        fix: fixAt(site, `draw these ${plain} meshes (one geometry, one material) as one InstancedMesh`),
      });
    }
  }

  const fnIds = new Map(), sigs = new Map();
  for (const m of materials) {
    const s = materialSignature(m, fnIds);
    if (s === null) continue;
    const k = `${m.type}|${s}`;
    if (!sigs.has(k)) sigs.set(k, []);
    sigs.get(k).push(m);
  }
  for (const ms of sigs.values()) {
    if (ms.length < 2) continue;
    const users = new Map();
    for (const m of ms) for (const [s, n] of matUsers.get(m) || []) bump(users, s, n);
    const site = most(users);
    let meshN = 0;
    for (const n of users.values()) meshN += n;
    hints.push({
      kind: 'material-dedup-candidate',
      site,
      evidence: { materials: ms.length, type: ms[0].type, meshes: meshN, names: [...new Set(ms.map((m) => m.name).filter(Boolean))].slice(0, 5),
        sites: [...users].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([s, n]) => ({ site: s, meshes: n })) },
      estimate: { materialsBefore: ms.length, materialsAfter: 1 },
      fix: fixAt(site, `these ${ms.length} ${ms[0].type}s have identical parameters: make one and share it`),
    });
  }

  const shadowOn = !!(renderer && renderer.shadowMap && renderer.shadowMap.enabled);
  for (const { o, visible } of lights) {
    if (!shadowOn || !visible) continue;
    const passes = o.isPointLight ? 6 : 1;
    const site = siteOf(o);
    const ms = o.shadow && o.shadow.mapSize ? [o.shadow.mapSize.x, o.shadow.mapSize.y] : null;
    hints.push({
      kind: 'shadow-caster-light',
      site,
      evidence: { light: label(o, 'Light'), type: o.type, passes, shadowCasters: casters, mapSize: ms },
      estimate: { extraCallsAtMost: passes * casters, basis: `${passes} shadow pass${passes > 1 ? 'es' : ''} a frame, each drawing every shadow caster its camera sees` },
      entities: [entityIdOf.get(o) || idOf(o).id],
      fix: fixAt(site, o.isPointLight
        ? `this point light renders ${passes} shadow passes a frame over ${casters} casters: turn its castShadow off, bake its shadows, or use a spot light (1 pass)`
        : `this light renders a shadow pass a frame over ${casters} casters: limit castShadow to the objects whose shadows are seen`),
    });
  }

  for (const t of textures) {
    const s = texSize(t);
    if (!s || Math.max(s.w, s.h) <= TEXTURE_MAX_SIDE) continue;
    const users = texUsers.get(t) || new Map();
    const site = most(users);
    const bytes = textureEstimate(t);
    const k = TEXTURE_MAX_SIDE / Math.max(s.w, s.h);
    const src = t.image && typeof t.image.currentSrc === 'string' && t.image.currentSrc ? t.image.currentSrc : t.image && typeof t.image.src === 'string' ? t.image.src : '';
    hints.push({
      kind: 'oversized-texture',
      site,
      evidence: { texture: t.name || (src && !src.startsWith('data:') ? src.replace(/^[a-z]+:\/\/[^/]*\/?/i, '').split(/[?#]/)[0] : 'Texture'),
        width: s.w, height: s.h, bytesEstimate: bytes, compressed: !!t.isCompressedTexture,
        sites: [...users].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([x, n]) => ({ site: x, meshes: n })) },
      estimate: { bytesBefore: bytes, bytesAfter: Math.round(bytes * k * k), basis: t.isCompressedTexture ? 'estimated decoded (RGBA8), not its compressed size' : 'width × height × bytes per texel, × 4/3 with mipmaps' },
      fix: fixAt(site, `scale the ${s.w}×${s.h} texture (~${MB(bytes)} MB) to ${Math.round(s.w * k)}×${Math.round(s.h * k)} or compress it (KTX2); it is used by meshes made`),
    });
  }

  const dpr = g && Number.isFinite(g.devicePixelRatio) ? g.devicePixelRatio : null;
  let pixelRatio = null, buffer = null;
  try {
    if (renderer && typeof renderer.getPixelRatio === 'function') pixelRatio = renderer.getPixelRatio();
    const gl = renderer && typeof renderer.getContext === 'function' ? renderer.getContext() : null;
    if (gl) buffer = [gl.drawingBufferWidth, gl.drawingBufferHeight];
  } catch { /* a lost context: no buffer size */ }
  if (pixelRatio !== null && pixelRatio > PIXEL_RATIO_CAP) {
    const site = identity && identity.pixelRatioSite ? identity.pixelRatioSite : 'unknown';
    const k = PIXEL_RATIO_CAP / pixelRatio;
    hints.push({
      kind: 'uncapped-pixel-ratio',
      site,
      evidence: { pixelRatio, devicePixelRatio: dpr, drawingBuffer: buffer, followsDevice: dpr !== null && pixelRatio === dpr },
      estimate: { pixelsBefore: buffer ? buffer[0] * buffer[1] : null, pixelsAfter: buffer ? Math.round(buffer[0] * k) * Math.round(buffer[1] * k) : null,
        basis: `the drawing buffer at a ratio of ${PIXEL_RATIO_CAP}` },
      fix: fixAt(site, `cap the ratio (${pixelRatio}× draws ${Math.round((pixelRatio / PIXEL_RATIO_CAP) ** 2 * 10) / 10}× the pixels of ${PIXEL_RATIO_CAP}×): renderer.setPixelRatio(Math.min(devicePixelRatio, ${PIXEL_RATIO_CAP}))`),
    });
  }

  const notes = [];
  if (unknownSites > 0)
    notes.push(`${unknownSites} of ${unknownSites + knownSites} meshes have no known site (added before the first Scene was made, or by code sloptimize could not see): sloptimize.track() names them`);
  if (compressed) notes.push(`${compressed} compressed textures are estimated decoded (RGBA8), not at their compressed size`);
  return {
    v: CENSUS_VERSION,
    totals,
    renderer: { pixelRatio, devicePixelRatio: dpr, drawingBuffer: buffer, shadowMap: shadowOn },
    entities: entitiesOut,
    entitiesTotal: list.length,
    hints,
    notes,
  };
}
