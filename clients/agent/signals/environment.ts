// Environment verdict inputs: DevTools, private mode, privacy browsers, VMs.
import type { Collectors } from '../collector.js';
import { clip, int, nav, win } from '../util.js';
import { gpuIdentity } from './webgl.js';

const MB = 1024 * 1024;

/** Docked DevTools takes at least this much from the viewport; browser chrome alone does not. */
const DEVTOOLS_WIDTH_GAP = 160;
const DEVTOOLS_HEIGHT_GAP = 250;

const SOFTWARE_RENDERER = /SwiftShader|llvmpipe|softpipe|Software Rasterizer|Microsoft Basic Render|Mesa OffScreen|Apple Software Renderer/i;
const VIRTUAL_GPU = /VMware|VirtualBox|Parallels|QEMU|virtio|virgl|Hyper-V|Red Hat|Citrix|Microsoft Remote Display/i;

async function storageQuotaMb(): Promise<number | null> {
  try {
    const { quota } = await nav.storage.estimate();
    return typeof quota === 'number' ? Math.round(quota / MB) : null;
  } catch {
    return null;
  }
}

/** Firefox and Safari private windows refuse the origin private file system. */
async function opfsError(): Promise<string | null> {
  if (!nav.storage || typeof nav.storage.getDirectory !== 'function') return null;
  try {
    await nav.storage.getDirectory();
    return null;
  } catch (e) {
    return clip(e instanceof Error ? e.name || 'Error' : 'Error', 64);
  }
}

export const environmentCollectors: Collectors<'devtools' | 'incognito' | 'privacyBrowser' | 'virtualMachine'> = {
  devtools: {
    collect() {
      const widthGap = int(win.outerWidth - win.innerWidth, -100_000, 100_000);
      const heightGap = int(win.outerHeight - win.innerHeight, -100_000, 100_000);
      return { open: widthGap > DEVTOOLS_WIDTH_GAP || heightGap > DEVTOOLS_HEIGHT_GAP, widthGap, heightGap };
    },
  },
  incognito: {
    async collect() {
      const [quotaMb, error] = await Promise.all([storageQuotaMb(), opfsError()]);
      const memory = (performance as Performance & { memory?: { jsHeapSizeLimit?: number } }).memory;
      const heapLimitMb = typeof memory?.jsHeapSizeLimit === 'number' ? Math.round(memory.jsHeapSizeLimit / MB) : null;
      // Chromium sizes an incognito quota from RAM, normally below the JS heap
      // limit, while a disk-backed profile gets a share of the disk.
      const smallQuota = quotaMb !== null && heapLimitMb !== null && quotaMb < heapLimitMb;
      return { likely: smallQuota || error !== null, quotaMb, heapLimitMb, opfsError: error };
    },
  },
  privacyBrowser: {
    async collect() {
      const markers: string[] = [];
      let name: string | null = null;
      if (nav.brave && typeof nav.brave.isBrave === 'function' && (await nav.brave.isBrave())) {
        name = 'Brave';
        markers.push('navigator.brave');
      } else if (/DuckDuckGo/.test(nav.userAgent) || 'duckduckgo' in nav) {
        name = 'DuckDuckGo';
        markers.push('duckduckgo');
      } else if (/Firefox\//.test(nav.userAgent)) {
        // resistFingerprinting (Tor Browser, Mullvad Browser, hardened Firefox)
        // flattens these values to fixed ones; two or more together are telling.
        const tz = new Intl.DateTimeFormat().resolvedOptions().timeZone;
        if (tz === 'UTC' || tz === 'Atlantic/Reykjavik') markers.push('timezoneUtc');
        if (screen.width === win.innerWidth && screen.height === win.innerHeight) markers.push('screenIsViewport');
        if (nav.hardwareConcurrency === 2) markers.push('twoCores');
        if ((nav.languages || []).join() === 'en-US,en') markers.push('enUsOnly');
        if (markers.length >= 2) name = 'Firefox resistFingerprinting';
      }
      return { name, markers };
    },
  },
  virtualMachine: {
    collect(ctx) {
      const markers: string[] = [];
      const gl = ctx.gl();
      const renderer = gl ? gpuIdentity(gl).renderer : '';
      const softwareRenderer = SOFTWARE_RENDERER.test(renderer);
      const virtualGpu = VIRTUAL_GPU.exec(renderer)?.[0] ?? null;
      if (softwareRenderer) markers.push('softwareRenderer');
      if (virtualGpu) markers.push('virtualGpu');
      if (nav.hardwareConcurrency === 1) markers.push('singleCore');
      const desktop = !nav.maxTouchPoints;
      if (desktop && typeof nav.deviceMemory === 'number' && nav.deviceMemory < 2) markers.push('lowMemory');
      // Hypervisor default resolutions that real desktop monitors rarely have today.
      const res = `${screen.width}x${screen.height}`;
      if (desktop && (res === '800x600' || res === '1024x768')) markers.push('vmResolution');
      return { softwareRenderer, virtualGpu, markers };
    },
  },
};
