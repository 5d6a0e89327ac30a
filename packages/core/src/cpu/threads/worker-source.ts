/**
 * The source of a CPU worker thread, as a string: started with `eval` in Node's
 * worker_threads and from a Blob URL in browsers, so no file has to be resolved next to a
 * bundle. A worker gets the backend's shared linear memory and a control array, then waits
 * (Atomics.wait) for the generation word to change, and on each wake-up:
 *
 * - loads a module if a load is pending (LOADS ran ahead of the worker's own count): bytes
 *   and new id at LOAD_AT in linear memory; the id then names the module's exported
 *   function; it counts itself off PENDING, which the caller waits for;
 * - takes chunks of the current job until none are left. A job at byte JOB of linear memory
 *   (i32 words): c + 1 word offsets (from JOB) where each of the CHUNKS chunks' calls start
 *   and the last ends; a call is a function id, an argument count and the i32 arguments.
 *   Chunks are claimed with compare-and-swap on NEXT, which holds the job's generation tag
 *   (high half) and the next chunk (low half), so a worker that wakes after its job ended
 *   claims nothing; the caller claims chunks too, and a thread the OS holds back gets fewer.
 *   Each finished chunk counts up DONE, which the caller waits for.
 */
export const CTRL = { GEN: 0, PENDING: 1, READY: 2, ERROR: 3, QUIT: 4, NEXT: 5, JOB: 6, CHUNKS: 7, DONE: 8, LOADS: 9, LOAD_AT: 10, TEXT: 16, TEXT_CHARS: 255, WORDS: 272 } as const;

export const WORKER_SOURCE = `'use strict';
(function () {
  var C = ${JSON.stringify(CTRL)};
  function fail(ctrl, e) {
    // The message goes to the caller through the control array's text area.
    if (Atomics.compareExchange(ctrl, C.ERROR, 0, 1) !== 0) return;
    var text = String((e && e.message) || e).slice(0, C.TEXT_CHARS);
    for (var c = 0; c < text.length; c++) ctrl[C.TEXT + c] = text.charCodeAt(c);
    ctrl[C.TEXT + text.length] = 0;
  }
  function serve(msg) {
    var memory = msg.memory, ctrl = new Int32Array(msg.ctrl), spin = msg.spin;
    var fns = [], args = [], loads = 0;
    var gen = Atomics.load(ctrl, C.GEN);
    Atomics.add(ctrl, C.READY, 1);
    Atomics.notify(ctrl, C.READY);
    for (;;) {
      var g = Atomics.load(ctrl, C.GEN);
      // A short spin first: a job often follows another within microseconds.
      for (var s = 0; g === gen && s < spin; s++) g = Atomics.load(ctrl, C.GEN);
      while (g === gen) { Atomics.wait(ctrl, C.GEN, gen); g = Atomics.load(ctrl, C.GEN); }
      gen = g;
      if (Atomics.load(ctrl, C.QUIT)) return;
      if (Atomics.load(ctrl, C.LOADS) > loads) {
        loads++;
        try {
          var w = new Int32Array(memory.buffer), l = Atomics.load(ctrl, C.LOAD_AT) >> 2;
          var bytes = new Uint8Array(memory.buffer, w[l], w[l + 1]).slice();
          var exp = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: memory } }).exports;
          for (var k in exp) if (typeof exp[k] === 'function') { fns[w[l + 2]] = exp[k]; break; }
        } catch (e) {
          fail(ctrl, e);
        }
        if (Atomics.sub(ctrl, C.PENDING, 1) === 1) Atomics.notify(ctrl, C.PENDING);
        continue;
      }
      var tag = g & 0x7fff, m = null;
      for (;;) {
        var v = Atomics.load(ctrl, C.NEXT);
        if (v < 0 || (v >>> 16) !== tag) break;
        var chunks = Atomics.load(ctrl, C.CHUNKS), c = v & 0xffff;
        if (c >= chunks) break;
        if (Atomics.compareExchange(ctrl, C.NEXT, v, v + 1) !== v) continue;
        try {
          if (m === null || m.buffer !== memory.buffer) m = new Int32Array(memory.buffer);
          var j = Atomics.load(ctrl, C.JOB) >> 2;
          for (var i = j + m[j + c], end = j + m[j + c + 1]; i < end;) {
            var id = m[i], na = m[i + 1];
            args.length = na;
            for (var a = 0; a < na; a++) args[a] = m[i + 2 + a];
            fns[id].apply(null, args);
            i += 2 + na;
          }
        } catch (e) {
          fail(ctrl, e);
        }
        if (Atomics.add(ctrl, C.DONE, 1) + 1 === chunks) Atomics.notify(ctrl, C.DONE);
      }
    }
  }
  if (typeof require === 'function') require('node:worker_threads').parentPort.once('message', serve);
  else self.onmessage = function (e) { self.onmessage = null; serve(e.data); };
})();
`;
