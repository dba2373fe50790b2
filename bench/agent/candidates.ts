// Runs in the bench's pages (bundled into its probe script by crossBrowser.ts).

/**
 * What else was measured as a candidate, in the page after the agent: the
 * generic families' widths at 1024 px, an emoji's, ink and font bounds, a
 * width at 16 px (engine rounding), the OS's Intl defaults, and the WebGL
 * limits that come from the driver.
 */
export function candidates(): Record<string, unknown> {
  const c = document.createElement('canvas').getContext('2d')!;
  const text = 'Hamburgefontsiv 0123456789 WQ@&fi';
  const m = (font: string, t = text) => {
    c.font = font;
    return c.measureText(t);
  };
  const out: Record<string, unknown> = {};
  for (const g of ['serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui']) out[`width 1024px ${g}`] = m(`1024px ${g}`).width;
  out['width 16px "DejaVu Sans"'] = m('16px "DejaVu Sans"').width;
  out['width 100px "Liberation Mono"'] = m('100px "Liberation Mono"').width;
  out['width 2048px "DejaVu Sans"'] = m('2048px "DejaVu Sans"').width;
  out['emoji width 100px'] = m('100px sans-serif', '\u{1F600}\u{1F44D}\u{1F3FD}').width;
  const d = m('1024px "DejaVu Sans"');
  out['actualBoundingBox ascent/descent 1024px'] = [d.actualBoundingBoxAscent, d.actualBoundingBoxDescent];
  out['fontBoundingBox ascent/descent 1024px'] = [d.fontBoundingBoxAscent, d.fontBoundingBoxDescent];
  out['Intl resolvedOptions'] = [Intl.DateTimeFormat().resolvedOptions(), Intl.NumberFormat().resolvedOptions()];
  const gl = document.createElement('canvas').getContext('webgl');
  if (gl) {
    const names = [
      'MAX_TEXTURE_SIZE',
      'MAX_RENDERBUFFER_SIZE',
      'MAX_VIEWPORT_DIMS',
      'ALIASED_LINE_WIDTH_RANGE',
      'ALIASED_POINT_SIZE_RANGE',
      'MAX_VERTEX_ATTRIBS',
      'MAX_VARYING_VECTORS',
    ] as const;
    out['WebGL driver limits'] = names.map((n) => {
      const v = gl.getParameter(gl[n]) as unknown;
      return ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v;
    });
  } else out['WebGL driver limits'] = null;
  return out;
}
