/**
 * The source of a CPU worker thread, as a string: started with `eval` in Node's
 * worker_threads and from a Blob URL in browsers, so no file has to be resolved next to a
 * bundle. A worker gets the backend's shared linear memory and a control array, then waits
 * (Atomics.wait) for a new job generation, runs its call list (exported kernel functions
 * with i32 arguments, read from linear memory) and counts itself done.
 *
 * Call list at byte `at` (i32 words): count, then per call: function id, argument count,
 * arguments. Function id -1 loads a module: (bytes at, byte length, new id); the new id
 * names the module's exported function.
 */
export const CTRL = { GEN: 0, PENDING: 1, READY: 2, ERROR: 3, QUIT: 4, LISTS: 16, TEXT: 96, TEXT_CHARS: 255, WORDS: 352 } as const;

export const WORKER_SOURCE = `'use strict';
(function () {
  var GEN = ${CTRL.GEN}, PENDING = ${CTRL.PENDING}, READY = ${CTRL.READY}, ERROR = ${CTRL.ERROR}, QUIT = ${CTRL.QUIT}, LISTS = ${CTRL.LISTS}, TEXT = ${CTRL.TEXT}, TEXT_CHARS = ${CTRL.TEXT_CHARS};
  function serve(msg) {
    var memory = msg.memory, ctrl = new Int32Array(msg.ctrl), index = msg.index, spin = msg.spin;
    var fns = [], args = [];
    var gen = Atomics.load(ctrl, GEN);
    Atomics.add(ctrl, READY, 1);
    Atomics.notify(ctrl, READY);
    for (;;) {
      var g = Atomics.load(ctrl, GEN);
      // A short spin first: a job usually follows another within microseconds.
      for (var s = 0; g === gen && s < spin; s++) g = Atomics.load(ctrl, GEN);
      while (g === gen) { Atomics.wait(ctrl, GEN, gen); g = Atomics.load(ctrl, GEN); }
      gen = g;
      if (Atomics.load(ctrl, QUIT)) return;
      var at = Atomics.load(ctrl, LISTS + index);
      if (!at) continue;
      try {
        var m = new Int32Array(memory.buffer), i = at >> 2, n = m[i++];
        while (n-- > 0) {
          var id = m[i++], na = m[i++];
          if (id === -1) {
            var bytes = new Uint8Array(memory.buffer, m[i], m[i + 1]).slice();
            var exp = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: memory } }).exports;
            for (var k in exp) if (typeof exp[k] === 'function') { fns[m[i + 2]] = exp[k]; break; }
          } else {
            args.length = na;
            for (var j = 0; j < na; j++) args[j] = m[i + j];
            fns[id].apply(null, args);
          }
          i += na;
        }
      } catch (e) {
        // The message goes to the caller through the control array's text area.
        if (Atomics.compareExchange(ctrl, ERROR, 0, 1) === 0) {
          var text = String(e && e.message || e).slice(0, TEXT_CHARS);
          for (var c = 0; c < text.length; c++) ctrl[TEXT + c] = text.charCodeAt(c);
          ctrl[TEXT + text.length] = 0;
        }
      }
      if (Atomics.sub(ctrl, PENDING, 1) === 1) Atomics.notify(ctrl, PENDING);
    }
  }
  if (typeof self === 'object' && self && typeof self.postMessage === 'function' && typeof require !== 'function') {
    self.onmessage = function (e) { self.onmessage = null; serve(e.data); };
  } else {
    require('node:worker_threads').parentPort.once('message', serve);
  }
})();
`;
