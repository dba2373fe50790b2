// 2D canvas: text (fonts, emoji, subpixel AA) plus geometry (curves, winding,
// blending) exercise the rasteriser and font stack.
import type { Collectors } from '../collector.js';
import { hashString } from '../hash.js';

function render(): string {
  const canvas = document.createElement('canvas');
  canvas.width = 240;
  canvas.height = 80;
  const c = canvas.getContext('2d');
  if (!c) throw new Error('2d canvas unsupported');

  c.textBaseline = 'alphabetic';
  c.fillStyle = '#f60';
  c.fillRect(90, 2, 70, 24);
  c.fillStyle = '#069';
  c.font = '15px "Times New Roman", serif';
  c.fillText('Cwm fjordbank gly \u{1F603}\u{1F44B}\u{1F3FD}', 3, 20);
  c.fillStyle = 'rgba(102, 204, 0, 0.7)';
  c.font = 'bold 17px Arial, sans-serif';
  c.fillText('Sphinx of black quartz \u00e6\u00df\u0416', 5, 42);

  c.globalCompositeOperation = 'multiply';
  for (const [color, x, y] of [
    ['#f2f', 40, 60],
    ['#2ff', 70, 60],
    ['#ff2', 55, 45],
  ] as const) {
    c.fillStyle = color;
    c.beginPath();
    c.arc(x, y, 18, 0, Math.PI * 2, true);
    c.closePath();
    c.fill();
  }
  c.fillStyle = '#f9c';
  c.beginPath();
  c.arc(180, 55, 20, 0, Math.PI * 2, true);
  c.arc(180, 55, 9, 0, Math.PI * 2, true);
  c.fill('evenodd');
  const gradient = c.createLinearGradient(120, 50, 230, 78);
  gradient.addColorStop(0, '#00f');
  gradient.addColorStop(1, '#f00');
  c.fillStyle = gradient;
  c.beginPath();
  c.moveTo(120, 78);
  c.bezierCurveTo(150, 30, 200, 90, 232, 50);
  c.lineTo(232, 78);
  c.fill();
  return canvas.toDataURL();
}

/** Pixels of a solid four-colour canvas that read back different from what was drawn. */
export function canvasNoise(): number {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 16;
  const c = canvas.getContext('2d');
  if (!c) return 0;
  const colors = [
    [255, 0, 0],
    [0, 255, 0],
    [0, 0, 255],
    [255, 255, 255],
  ];
  colors.forEach(([r, g, b], i) => {
    c.fillStyle = `rgb(${r},${g},${b})`;
    c.fillRect((i % 2) * 8, (i >> 1) * 8, 8, 8);
  });
  const data = c.getImageData(0, 0, 16, 16).data;
  let altered = 0;
  for (let p = 0; p < 256; p++) {
    const x = p % 16;
    const y = (p / 16) | 0;
    const expected = colors[(x >> 3) + (y >> 3) * 2]!;
    const o = p * 4;
    if (data[o] !== expected[0] || data[o + 1] !== expected[1] || data[o + 2] !== expected[2] || data[o + 3] !== 255) altered++;
  }
  return altered;
}

export const canvasCollectors: Collectors<'canvas'> = {
  canvas: {
    collect() {
      const first = render();
      // Some browsers add fresh noise per readback, so two renders differ;
      // others (Brave) use a per-site seed, which shows on flat colours instead.
      const isFarbled = render() !== first || canvasNoise() > 0;
      return { hash: hashString(first), isFarbled };
    },
  },
};
