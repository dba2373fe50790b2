// WebGL: GPU identity and capability limits, from the run's shared context.
import type { Collectors } from '../collector.js';
import type { Context } from '../context.js';
import { hashJson } from '../hash.js';
import { clip } from '../util.js';

function requireGl(ctx: Context): WebGLRenderingContext {
  const gl = ctx.gl();
  if (!gl) throw new Error('WebGL unavailable');
  return gl;
}

/** Unmasked GPU names when the browser exposes them, else the masked ones. */
export function gpuIdentity(gl: WebGLRenderingContext): { renderer: string; vendor: string } {
  const renderer = String(gl.getParameter(gl.RENDERER) ?? '');
  const vendor = String(gl.getParameter(gl.VENDOR) ?? '');
  const ext = gl.getExtension('WEBGL_debug_renderer_info');
  if (!ext) return { renderer, vendor };
  return {
    renderer: String(gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) ?? renderer),
    vendor: String(gl.getParameter(ext.UNMASKED_VENDOR_WEBGL) ?? vendor),
  };
}

const LIMITS = [
  'ALIASED_LINE_WIDTH_RANGE',
  'ALIASED_POINT_SIZE_RANGE',
  'ALPHA_BITS',
  'BLUE_BITS',
  'DEPTH_BITS',
  'GREEN_BITS',
  'MAX_COMBINED_TEXTURE_IMAGE_UNITS',
  'MAX_CUBE_MAP_TEXTURE_SIZE',
  'MAX_FRAGMENT_UNIFORM_VECTORS',
  'MAX_RENDERBUFFER_SIZE',
  'MAX_TEXTURE_IMAGE_UNITS',
  'MAX_TEXTURE_SIZE',
  'MAX_VARYING_VECTORS',
  'MAX_VERTEX_ATTRIBS',
  'MAX_VERTEX_TEXTURE_IMAGE_UNITS',
  'MAX_VERTEX_UNIFORM_VECTORS',
  'MAX_VIEWPORT_DIMS',
  'RED_BITS',
  'STENCIL_BITS',
  'SUBPIXEL_BITS',
] as const;

const toPlain = (v: unknown): unknown => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v);

function parameters(gl: WebGLRenderingContext): unknown[] {
  const limits = LIMITS.map((name) => toPlain(gl.getParameter(gl[name])));
  const anisotropy = gl.getExtension('EXT_texture_filter_anisotropic');
  const precisions: number[] = [];
  for (const shader of [gl.VERTEX_SHADER, gl.FRAGMENT_SHADER]) {
    for (const type of [gl.LOW_FLOAT, gl.MEDIUM_FLOAT, gl.HIGH_FLOAT, gl.LOW_INT, gl.MEDIUM_INT, gl.HIGH_INT]) {
      const p = gl.getShaderPrecisionFormat(shader, type);
      if (p) precisions.push(p.rangeMin, p.rangeMax, p.precision);
    }
  }
  return [limits, anisotropy ? gl.getParameter(anisotropy.MAX_TEXTURE_MAX_ANISOTROPY_EXT) : null, gl.getContextAttributes(), precisions];
}

export const webglCollectors: Collectors<'webgl' | 'webglExtensions'> = {
  webgl: {
    collect(ctx) {
      const { renderer, vendor } = gpuIdentity(requireGl(ctx));
      return { renderer: clip(renderer, 256), vendor: clip(vendor, 256) };
    },
  },
  webglExtensions: {
    collect(ctx) {
      const gl = requireGl(ctx);
      const extensions = (gl.getSupportedExtensions() || []).slice().sort();
      return {
        version: clip(String(gl.getParameter(gl.VERSION) ?? ''), 128),
        shadingLanguageVersion: clip(String(gl.getParameter(gl.SHADING_LANGUAGE_VERSION) ?? ''), 128),
        vendor: clip(String(gl.getParameter(gl.VENDOR) ?? ''), 128),
        renderer: clip(String(gl.getParameter(gl.RENDERER) ?? ''), 128),
        extensionCount: Math.min(extensions.length, 1000),
        extensionsHash: hashJson(extensions),
        parametersHash: hashJson(parameters(gl)),
      };
    },
  },
};
