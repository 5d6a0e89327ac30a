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
export const CTRL = {
  GEN: 0,
  PENDING: 1,
  READY: 2,
  ERROR: 3,
  QUIT: 4,
  NEXT: 5,
  JOB: 6,
  CHUNKS: 7,
  DONE: 8,
  LOADS: 9,
  LOAD_AT: 10,
  TEXT: 16,
  TEXT_CHARS: 255,
  WORDS: 272,
} as const;

// Kept compact by hand (bundlers do not minify a string); the steps are described above.
export const WORKER_SOURCE = `(function(){var C=${JSON.stringify(CTRL)};
function fail(t,e){if(Atomics.compareExchange(t,C.ERROR,0,1)!==0)return;var s=String(e&&e.message||e).slice(0,C.TEXT_CHARS),i=0;for(;i<s.length;i++)t[C.TEXT+i]=s.charCodeAt(i);t[C.TEXT+i]=0}
function serve(d){var M=d.memory,t=new Int32Array(d.ctrl),f=[],a=[],L=0,m=null,G=Atomics.load(t,C.GEN);Atomics.add(t,C.READY,1);Atomics.notify(t,C.READY);
for(;;){var g=Atomics.load(t,C.GEN);for(var s=0;g===G&&s<d.spin;s++)g=Atomics.load(t,C.GEN);
while(g===G){Atomics.wait(t,C.GEN,G);g=Atomics.load(t,C.GEN)}G=g;if(Atomics.load(t,C.QUIT))return;
if(Atomics.load(t,C.LOADS)>L){L++;try{var w=new Int32Array(M.buffer),l=Atomics.load(t,C.LOAD_AT)>>>2,x=new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(M.buffer,w[l]>>>0,w[l+1]).slice()),{env:{memory:M}}).exports;for(var k in x)if(typeof x[k]==='function'){f[w[l+2]]=x[k];break}}catch(e){fail(t,e)}
if(Atomics.sub(t,C.PENDING,1)===1)Atomics.notify(t,C.PENDING);continue}
for(var T=g&0x7fff;;){var v=Atomics.load(t,C.NEXT);if(v<0||v>>>16!==T)break;var n=Atomics.load(t,C.CHUNKS),c=v&0xffff;if(c>=n)break;
if(Atomics.compareExchange(t,C.NEXT,v,v+1)!==v)continue;
try{if(m===null||m.buffer!==M.buffer)m=new Int32Array(M.buffer);var j=Atomics.load(t,C.JOB)>>>2;
for(var i=j+m[j+c],e=j+m[j+c+1];i<e;){var na=m[i+1];a.length=na;for(var q=0;q<na;q++)a[q]=m[i+2+q];f[m[i]].apply(null,a);i+=2+na}}catch(e){fail(t,e)}
if(Atomics.add(t,C.DONE,1)+1===n)Atomics.notify(t,C.DONE)}}}
if(typeof require==='function')require('node:worker_threads').parentPort.once('message',serve);else self.onmessage=function(e){self.onmessage=null;serve(e.data)}})();`;
