/** The page's markup and style; /app.js fills in the rest. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Surf · character GPT</title>
<style>
  :root { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222; background: #fafafa; }
  body { margin: 0; padding: 16px 24px; }
  header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; margin-bottom: 12px; }
  h1 { font-size: 20px; margin: 0; }
  #backend { font-size: 13px; color: #555; }
  #backend.fallback { color: #a15c00; }
  section { background: #fff; border: 1px solid #e3e3e3; border-radius: 8px; padding: 14px; max-width: 900px; margin-bottom: 14px; }
  .controls { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; font-size: 13px; margin-bottom: 8px; }
  .controls input { width: 52px; font: inherit; padding: 2px 4px; }
  button { font: inherit; font-size: 13px; padding: 5px 12px; border-radius: 5px; border: 1px solid #bbb; background: #fff; cursor: pointer; }
  button.primary { background: #2e86de; border-color: #2e86de; color: #fff; }
  button:disabled { opacity: 0.5; cursor: default; }
  .stats { font-size: 13px; color: #444; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
  #chart { width: 100%; height: 260px; display: block; }
  #sample { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 13px; min-height: 80px; }
</style>
</head>
<body>
<header><h1>Surf · character GPT on the Brown corpus</h1><span id="backend">starting…</span></header>
<section>
  <div class="controls">
    <button id="start" class="primary" disabled>Start training</button>
    <button id="stop" disabled>Stop</button>
    <label>steps <input id="steps" value="2000"></label>
    <label>layers <input id="layers" value="4"></label>
    <label>width <input id="embd" value="128"></label>
    <label>context <input id="block" value="128"></label>
    <label>batch <input id="batch" value="32"></label>
    <label>lr <input id="lr" value="0.002"></label>
  </div>
  <div id="status" class="stats">loading the corpus…</div>
  <div class="stats">step <b id="step">0</b> · loss <b id="loss">–</b> · validation <b id="val">–</b> nats/char · bigram <b id="bigram">–</b> · <b id="rate">–</b> tokens/s</div>
  <canvas id="chart"></canvas>
</section>
<section><div class="stats">sample after the latest validation (temperature 0.8, top-k 20):</div><div id="sample"></div></section>
<script type="module" src="/app.js"></script>
</body>
</html>
`;
