// Audio: an offline oscillator -> compressor render depends on the platform's
// DSP code paths (float rounding, SIMD), so its samples vary by OS and CPU.
import type { Collectors } from '../collector.js';
import { hashBytes } from '../hash.js';
import { num, win } from '../util.js';

const LENGTH = 5000;

async function renderSamples(): Promise<Float32Array> {
  const Offline = win.OfflineAudioContext || win.webkitOfflineAudioContext;
  if (!Offline) throw new Error('OfflineAudioContext unsupported');
  const ac = new Offline(1, LENGTH, 44100);
  const osc = ac.createOscillator();
  osc.type = 'triangle';
  osc.frequency.value = 10_000;
  const comp = ac.createDynamicsCompressor();
  comp.threshold.value = -50;
  comp.knee.value = 40;
  comp.ratio.value = 12;
  comp.attack.value = 0;
  comp.release.value = 0.25;
  osc.connect(comp);
  comp.connect(ac.destination);
  osc.start(0);
  // Old Safari returns undefined from startRendering and fires oncomplete instead.
  const buffer = await new Promise<AudioBuffer>((resolve, reject) => {
    ac.oncomplete = (e) => resolve(e.renderedBuffer);
    const p = ac.startRendering() as Promise<AudioBuffer> | undefined;
    p?.then(resolve, reject);
  });
  return buffer.getChannelData(0);
}

export const audioCollectors: Collectors<'audio' | 'audioBaseLatency'> = {
  audio: {
    // Rendering can stall on a background tab or a suspended audio device.
    timeout: 2000,
    async collect(ctx) {
      const { sampleRate } = ctx.audio();
      const samples = await renderSamples();
      // The compressor has settled by the tail; earlier samples add no entropy.
      const tail = samples.slice(4500);
      return { hash: hashBytes(new Uint8Array(tail.buffer)), sampleRate: num(sampleRate, 1, 1_000_000) };
    },
  },
  audioBaseLatency: {
    collect(ctx) {
      const { baseLatency } = ctx.audio();
      return { baseLatency: baseLatency === null ? null : num(baseLatency, 0, 10) };
    },
  },
};
