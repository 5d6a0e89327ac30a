/** The page's markup and style; the script (/app.js) fills in the rest. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Surf · MNIST MLP and CNN</title>
<style>
  :root { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222; background: #fafafa; }
  body { margin: 0; padding: 16px 24px; }
  header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; margin-bottom: 12px; }
  h1 { font-size: 20px; margin: 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  #backend { font-size: 13px; color: #555; }
  #backend.fallback { color: #a15c00; }
  main { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
  section { background: #fff; border: 1px solid #e3e3e3; border-radius: 8px; padding: 14px; }
  .train { flex: 1 1 560px; max-width: 720px; }
  .controls { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; font-size: 13px; }
  .controls label { display: flex; gap: 4px; align-items: center; }
  .controls input { width: 46px; font: inherit; padding: 2px 4px; }
  button { font: inherit; font-size: 13px; padding: 5px 12px; border-radius: 5px; border: 1px solid #bbb; background: #fff; cursor: pointer; }
  button.primary { background: #2e86de; border-color: #2e86de; color: #fff; }
  button:disabled { opacity: 0.5; cursor: default; }
  .status { font-size: 13px; color: #222; margin: 8px 0 2px; }
  .stats { font-size: 13px; color: #444; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
  #chart { width: 100%; height: 260px; display: block; }
  .draw { flex: 0 0 auto; }
  .pad-row { display: flex; gap: 14px; }
  #pad { width: 280px; height: 280px; border-radius: 6px; cursor: crosshair; background: #000; }
  #preview { width: 84px; height: 84px; image-rendering: pixelated; border: 1px solid #ddd; background: #000; }
  .side { display: flex; flex-direction: column; gap: 8px; font-size: 12px; color: #666; }
  #prediction { font-size: 15px; margin: 10px 0 6px; min-height: 20px; }
  #prediction b { font-size: 22px; }
  .bar-row { display: grid; grid-template-columns: 14px 1fr 48px; gap: 6px; align-items: center; font-size: 12px; height: 17px; font-variant-numeric: tabular-nums; }
  .bar-track { background: #eee; height: 11px; border-radius: 3px; overflow: hidden; }
  .bar-fill { display: block; height: 100%; background: #9bbbe0; width: 0; transition: width 0.1s; }
  .bar-row.best .bar-fill { background: #2e86de; }
  .bar-row.best { font-weight: 600; }
  .bar-value { text-align: right; color: #555; }
  body[data-model="mlp"] .cnn-only, body[data-model="cnn"] .mlp-only { display: none; }
  #filters-box { margin-top: 12px; }
  #filters-box .hint { font-weight: normal; font-size: 12px; color: #777; }
  #filters { image-rendering: pixelated; }
</style>
</head>
<body>
<header>
  <h1>Surf · MNIST MLP and CNN</h1>
  <span id="backend">starting…</span>
</header>
<main>
  <section class="train">
    <div class="controls">
      <button id="start" class="primary" disabled>Start training</button>
      <button id="stop" disabled>Stop</button>
      <label>model <select id="model"><option value="mlp">MLP</option><option value="cnn">CNN</option></select></label>
      <label class="mlp-only">hidden <input id="hidden" value="128"></label>
      <label class="cnn-only">channels <input id="channels" value="16,32"></label>
      <label>batch <input id="batch" value="64"></label>
      <label>lr <input id="lr" value="0.002"></label>
      <label>epochs <input id="epochs" value="5"></label>
    </div>
    <div id="status" class="status">loading digits…</div>
    <div class="stats">
      epoch <b id="epoch">–</b> · step <b id="step">0</b> · <b id="rate">–</b> steps/s ·
      loss <b id="loss">–</b> · test accuracy <b id="acc">–</b>
    </div>
    <canvas id="chart"></canvas>
    <div id="filters-box" class="cnn-only">
      <h2>First-layer filters <span class="hint">(3x3, blue negative, red positive; they change as the CNN learns)</span></h2>
      <canvas id="filters" width="0" height="0"></canvas>
    </div>
  </section>
  <section class="draw">
    <h2>Draw a digit</h2>
    <div class="pad-row">
      <canvas id="pad" width="280" height="280"></canvas>
      <div class="side">
        <button id="clear">Clear</button>
        <button id="sample">Test digit</button>
        <span>the network sees:</span>
        <canvas id="preview" width="28" height="28"></canvas>
      </div>
    </div>
    <div id="prediction">Train a little, then draw a digit.</div>
    <div id="bars"></div>
  </section>
</main>
<script type="module" src="/app.js"></script>
</body>
</html>
`;
