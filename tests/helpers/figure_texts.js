// Every visible text of every Plotly figure on the page, with how the browser drew it:
// size, fill, the colours behind it (plot area, paper, page), its box and its role.
() => {
  const out = [];
  const parse = c => { const m = (c || '').match(/[\d.]+/g) || []; const v = m.map(Number);
    return v.length >= 3 ? [v[0], v[1], v[2], v.length > 3 ? v[3] : 1] : null; };
  const app = document.querySelector('[data-testid="stApp"]');
  const page = app ? parse(getComputedStyle(app).backgroundColor) : [255, 255, 255, 1];
  document.querySelectorAll('.js-plotly-plot').forEach((plot, p) => {
    const svg = plot.querySelector('.main-svg');
    const paper = parse(svg.style.background || getComputedStyle(svg).backgroundColor);
    const areas = Array.from(plot.querySelectorAll('rect.bg')).map(r => {
      const s = getComputedStyle(r); const c = parse(s.fill);
      if (c) c[3] *= parseFloat(s.fillOpacity || '1');
      return {box: r.getBoundingClientRect(), colour: c};
    });
    const frame = svg.getBoundingClientRect();
    plot.querySelectorAll('text').forEach(t => {
      if (!t.textContent.trim() || t.closest('.hoverlayer')) return;
      const b = t.getBoundingClientRect(); if (b.width === 0) return;
      const cx = b.x + b.width / 2, cy = b.y + b.height / 2;
      const area = areas.find(a => cx >= a.box.left && cx <= a.box.right && cy >= a.box.top && cy <= a.box.bottom);
      const meet = a => Math.max(0, Math.min(b.right, a.box.right) - Math.max(b.left, a.box.left))
        * Math.max(0, Math.min(b.bottom, a.box.bottom) - Math.max(b.top, a.box.top));
      const touched = areas.filter(a => meet(a) > 0).sort((x, y) => meet(y) - meet(x))[0];
      const g = t.closest('g[class]');
      out.push({plot: p, text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize),
        fill: parse(getComputedStyle(t).fill), opacity: parseFloat(getComputedStyle(t).fillOpacity || '1'),
        behind: [area ? area.colour : null, paper, page],
        box: [b.left, b.top, b.right, b.bottom], frame: [frame.left, frame.top, frame.right, frame.bottom],
        area: touched ? [touched.box.left, touched.box.top, touched.box.right, touched.box.bottom] : null,
        onplot: !!t.closest('.textpoint'),
        role: t.getAttribute('class') || '', group: g ? g.getAttribute('class') : '',
        incell: !!t.closest('.heatmaplayer') || !!t.closest('.barlayer')});
    });
  });
  return out;
}
