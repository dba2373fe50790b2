// Resources several collectors share within one collection run: one WebGL
// context (browsers cap how many may exist) and one AudioContext read.
import { win } from './util.js';

export interface AudioInfo {
  sampleRate: number;
  baseLatency: number | null;
}

export interface Context {
  /** A WebGL 1 context, or null when WebGL is unavailable. */
  gl(): WebGLRenderingContext | null;
  /** Read once from a short-lived AudioContext (closed right away so it holds no device). */
  audio(): AudioInfo;
  dispose(): void;
}

function once<T>(fn: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = fn();
      done = true;
    }
    return value;
  };
}

export function createContext(): Context {
  let glContext: WebGLRenderingContext | null | undefined;
  const gl = (): WebGLRenderingContext | null => {
    if (glContext === undefined) {
      const canvas = document.createElement('canvas');
      glContext = (canvas.getContext('webgl') || canvas.getContext('experimental-webgl')) as WebGLRenderingContext | null;
    }
    return glContext;
  };
  const audio = once((): AudioInfo => {
    const Ctor = win.AudioContext || win.webkitAudioContext;
    if (!Ctor) throw new Error('AudioContext unsupported');
    const ac = new Ctor();
    const info = { sampleRate: ac.sampleRate, baseLatency: typeof ac.baseLatency === 'number' ? ac.baseLatency : null };
    ac.close().catch(() => undefined);
    return info;
  });
  return {
    gl,
    audio,
    dispose() {
      try {
        glContext?.getExtension('WEBGL_lose_context')?.loseContext();
      } catch {
        // Already lost or never created: nothing to release.
      }
    },
  };
}
