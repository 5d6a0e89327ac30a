/** The class-probability bars under the pad: one row per digit, the top class highlighted. */
export function renderBars(host: HTMLElement, probs: ArrayLike<number> | null): void {
  if (host.childElementCount !== 10) {
    host.textContent = '';
    for (let c = 0; c < 10; c++) {
      const row = document.createElement('div');
      row.className = 'bar-row';
      row.innerHTML = `<span class="bar-label">${c}</span><span class="bar-track"><span class="bar-fill"></span></span><span class="bar-value"></span>`;
      host.appendChild(row);
    }
  }
  let best = -1;
  if (probs) for (let c = 0; c < 10; c++) if (best < 0 || probs[c] > probs[best]) best = c;
  for (let c = 0; c < 10; c++) {
    const row = host.children[c] as HTMLElement;
    const p = probs ? probs[c] : 0;
    (row.querySelector('.bar-fill') as HTMLElement).style.width = `${(p * 100).toFixed(1)}%`;
    (row.querySelector('.bar-value') as HTMLElement).textContent = probs ? `${(p * 100).toFixed(1)}%` : '';
    row.classList.toggle('best', c === best);
    row.dataset.prob = probs ? String(p) : '';
  }
}
