// Shared by page.html (run.js) and ref_page.html (f16_error.js), loaded by each in
// its <head>: loads tfjs, then sets window.__benchReady; phase markers, the phases'
// timing of a run, tfjs WebGL flags, the GL context's description.
'use strict';

// The tfjs 4.22.0 UMD bundles from bench/webgl/node_modules, run in this order;
// window.__benchReady on the load event, once they and the page's own script have run.
for (const p of ['tfjs-core/dist/tf-core', 'tfjs-converter/dist/tf-converter',
  'tfjs-backend-webgl/dist/tf-backend-webgl']) {
  const s = document.createElement('script');
  s.src = `/bench/webgl/node_modules/@tensorflow/${p}.min.js`;
  s.async = false;
  document.head.appendChild(s);
}
window.addEventListener('load', () => { window.__benchReady = true; });

// Phase markers go out through console.log: the CDP event is emitted when the
// call is made, so run.js learns the phase even while the page is busy in a
// long synchronous stretch of executeAsync (static graphs run mostly sync).
function phase(name) {
  console.log('[bench] phase=' + name + ' t=' + performance.now().toFixed(1));
}

// The frame of a page's run: runs body(mark) and times its phases into res.phases.
// mark(next) ends the current phase (mark.phase, first 'init') and starts next, each
// announced by phase(); res.ok once body has finished. On an exception:
// res.failedPhase, res.error, res.errorStack, then onError() (the page's own
// records), res.gl if not yet there. Then after() if given, res.totalMs. Returns res.
async function timedRun(res, body, onError, after) {
  const t0 = performance.now();
  let t = t0;
  const mark = (next) => {
    const now = performance.now();
    res.phases[mark.phase] = +(now - t).toFixed(1);
    t = now; mark.phase = next; phase(next);
  };
  mark.phase = 'init';
  phase('init');
  try {
    await body(mark);
    mark('done');
    res.ok = true;
  } catch (e) {
    res.phases[mark.phase] = +(performance.now() - t).toFixed(1);
    res.failedPhase = mark.phase;
    res.error = String((e && e.message) || e);
    res.errorStack = e && e.stack ? String(e.stack).split('\n').slice(0, 8).join('\n') : null;
    if (onError) onError();
    try { res.gl = res.gl || glInfo(); } catch (e2) { /* ignore */ }
    phase('failed');
  }
  if (after) after();
  res.totalMs = +(performance.now() - t0).toFixed(1);
  return res;
}

const FLAG_NAMES = [
  'WEBGL_VERSION', 'WEBGL_MAX_TEXTURE_SIZE', 'WEBGL_RENDER_FLOAT32_CAPABLE',
  'WEBGL_RENDER_FLOAT32_ENABLED', 'WEBGL_DELETE_TEXTURE_THRESHOLD',
  'WEBGL_FORCE_F16_TEXTURES', 'WEBGL_PACK', 'WEBGL_CPU_FORWARD',
  'WEBGL_SIZE_UPLOAD_UNIFORM', 'WEBGL_FLUSH_THRESHOLD',
  'WEBGL_MAX_TEXTURES_IN_SHADER', 'WEBGL_USE_SHAPES_UNIFORMS',
  'WEBGL_EXP_CONV', 'WEBGL_CONV_IM2COL', 'WEBGL_DOWNLOAD_FLOAT_ENABLED',
  'WEBGL_FENCE_API_ENABLED', 'CPU_HANDOFF_SIZE_THRESHOLD',
];

function readFlags() {
  const out = {};
  for (const f of FLAG_NAMES) {
    try { out[f] = tf.env().get(f); } catch (e) { out[f] = 'error: ' + e.message; }
  }
  return out;
}

function glInfo() {
  const info = {};
  try {
    const gl = tf.backend().gpgpu.gl;
    info.contextType = (typeof WebGL2RenderingContext !== 'undefined' &&
                        gl instanceof WebGL2RenderingContext) ? 'webgl2' : 'webgl1';
    info.VERSION = gl.getParameter(gl.VERSION);
    info.SHADING_LANGUAGE_VERSION = gl.getParameter(gl.SHADING_LANGUAGE_VERSION);
    info.VENDOR = gl.getParameter(gl.VENDOR);
    info.RENDERER = gl.getParameter(gl.RENDERER);
    info.MAX_TEXTURE_SIZE = gl.getParameter(gl.MAX_TEXTURE_SIZE);
    info.MAX_RENDERBUFFER_SIZE = gl.getParameter(gl.MAX_RENDERBUFFER_SIZE);
    const dbg = gl.getExtension('WEBGL_debug_renderer_info');
    if (dbg) {
      info.UNMASKED_VENDOR = gl.getParameter(dbg.UNMASKED_VENDOR_WEBGL);
      info.UNMASKED_RENDERER = gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL);
    }
    info.EXT_color_buffer_float = !!gl.getExtension('EXT_color_buffer_float');
    info.EXT_color_buffer_half_float = !!gl.getExtension('EXT_color_buffer_half_float');
  } catch (e) {
    info.error = e.message;
  }
  return info;
}
