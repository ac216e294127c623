import * as fs from 'node:fs';
import { startRealApiServer } from './test/support/real-apiserver';
(async () => {
  const { plane, info } = await startRealApiServer(process.env.ROOMKEEPER_K8S_ASSETS!);
  fs.writeFileSync('/tmp/deep/kubeconfig-path', info.adminKubeconfig);
  console.log('READY', info.adminKubeconfig);
  process.on('SIGTERM', () => { void plane.stop().then(() => process.exit(0)); });
  setInterval(() => {}, 1 << 30);
})();
