// Every signal's collector. Typed as one Collectors<SignalName> so a signal
// added to the contract without a collector (or with the wrong shape) fails to compile.
import type { SignalName } from '@deviceid/contract';
import type { Collectors } from '../collector.js';
import { appleCollectors } from './apple.js';
import { audioCollectors } from './audio.js';
import { automationCollectors } from './automation.js';
import { canvasCollectors } from './canvas.js';
import { deviceTokenCollectors } from './deviceToken.js';
import { displayCollectors } from './display.js';
import { domBlockerCollectors } from './domBlockers.js';
import { engineCollectors } from './engine.js';
import { environmentCollectors } from './environment.js';
import { fontCollectors } from './fonts.js';
import { fontMetricsCollectors } from './fontMetrics.js';
import { localeCollectors } from './locale.js';
import { navigatorCollectors } from './navigator.js';
import { storageCollectors } from './storage.js';
import { tamperingCollectors } from './tampering.js';
import { webglCollectors } from './webgl.js';

// Canvas before WebGL: creating a GL context first can change 2D output on some drivers.
// Font metrics after domBlockers, and it waits a task before measuring: its
// synchronous work runs while the blocker bait waits its fixed 120 ms.
export const collectors: Collectors<SignalName> = {
  ...canvasCollectors,
  ...webglCollectors,
  ...audioCollectors,
  ...navigatorCollectors,
  ...fontCollectors,
  ...domBlockerCollectors,
  ...fontMetricsCollectors,
  ...displayCollectors,
  ...localeCollectors,
  ...engineCollectors,
  ...storageCollectors,
  ...appleCollectors,
  ...automationCollectors,
  ...tamperingCollectors,
  ...environmentCollectors,
  ...deviceTokenCollectors,
};
