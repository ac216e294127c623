/**
 * The images, checked offline (CI has no Docker engine): Dockerfile (operator + gateway),
 * Dockerfile.simroom (simulated game room) and .dockerignore.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ImageRules, isIgnored, lintDockerfile, parseDockerfile, parseDockerignore, stagesOf } from './dockerfile-lint';
import { REPO_ROOT } from './helm-cli';
import { STANDALONE_ROOM_SOURCE } from '../support/standalone-room';

const read = (file: string): string => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

const NODE_22 = /^node:22([.-]|$)/;
const PRODUCT_RULES: ImageRules = {
  baseImage: NODE_22,
  runtimeContextCopies: ['package.json', 'package-lock.json', 'proto'],
  runtimeStageCopies: ['dist', 'node_modules'],
  cmd: ['node', 'dist/operator/src/main.js'],
};
const SIMROOM_RULES: ImageRules = {
  ...PRODUCT_RULES,
  runtimeContextCopies: ['package.json'],
  cmd: ['node', 'dist/sandbox/src/rooms/standalone.js'],
};

describe('Dockerfile (operator and gateway image)', () => {
  const text = read('Dockerfile');

  it('follows every image rule', () => {
    expect(lintDockerfile(text, PRODUCT_RULES)).toEqual([]);
  });

  it('builds with the dev toolchain and ships only dist/, proto/, package files and production node_modules', () => {
    const stages = stagesOf(parseDockerfile(text));
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    const build = stages[0]!;
    expect(build.instructions.some((i) => i.keyword === 'RUN' && /npm ci\b/.test(i.args) && !/--omit=dev/.test(i.args))).toBe(true);
    expect(build.instructions.some((i) => i.keyword === 'RUN' && /tsc -p tsconfig\.build\.json/.test(i.args))).toBe(true);
    const runtime = stages[2]!;
    const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map((i) => `${i.flags.from ?? 'context'}:${i.words.slice(0, -1).join(',')}`);
    expect(copies).toEqual(['deps:/app/node_modules', 'build:/src/dist', 'context:package.json,package-lock.json', 'context:proto']);
    expect(runtime.instructions.filter((i) => i.keyword === 'USER').map((i) => i.args)).toEqual(['10001:10001']);
    expect(runtime.instructions.some((i) => i.keyword === 'RUN')).toBe(false);
  });

  it('has the entry points the chart runs', () => {
    const chartCommands = ['operator', 'gateway'].map((c) => read(`helm/roomkeeper/templates/${c}-deployment.yaml`).match(/command: (\[.*\])/)?.[1]);
    expect(chartCommands).toEqual(['["node", "--max-old-space-size={{ .Values.operator.maxHeapMB | int }}", "dist/operator/src/main.js"]', '["node", "--max-old-space-size={{ $values.maxHeapMB | int }}", "--max-semi-space-size={{ $values.maxSemiSpaceMB | int }}",{{ if $values.optimizeForSize }} "--optimize-for-size",{{ end }} "dist/api-gateway/src/main.js"]']);
  });

  it('runs entry points that `npm run build` (tsconfig.build.json) compiles', () => {
    const base = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    for (const entry of ['dist/operator/src/main.js', 'dist/api-gateway/src/main.js']) {
      const source = path.join(base.compilerOptions.rootDir, path.relative(base.compilerOptions.outDir, entry)).replace(/\.js$/, '.ts');
      expect([entry, fs.existsSync(path.join(REPO_ROOT, source))]).toEqual([entry, true]);
      expect(build.include).toContain(source.split('/')[0]);
    }
  });
});

describe('Dockerfile.simroom (simulated game room)', () => {
  it('follows every image rule and runs the standalone simulator', () => {
    expect(lintDockerfile(read('Dockerfile.simroom'), SIMROOM_RULES)).toEqual([]);
  });

  it('runs the compiled form of the entry point the e2e test runs, which is built on @roomkeeper/sdk, and compiles it with the SDK\'s sources', () => {
    const stages = stagesOf(parseDockerfile(read('Dockerfile.simroom')));
    const runtime = stages[stages.length - 1]!;
    const cmd = runtime.instructions.filter((i) => i.keyword === 'CMD').map((i) => i.words);
    expect(cmd).toHaveLength(1);
    const entry = cmd[0]?.[1] ?? '';
    const base = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    const source = path.join(base.compilerOptions.rootDir, path.relative(base.compilerOptions.outDir, entry)).replace(/\.js$/, '.ts');
    expect(source).toBe(STANDALONE_ROOM_SOURCE);
    expect(read(source)).toMatch(/^import \{[^}]*\bRoomClient\b[^}]*\} from '(\.\.\/)+sdk\/src\/index';$/m);
    const build = stages[0]!;
    const built = build.instructions.filter((i) => i.keyword === 'COPY' && i.flags.from === undefined).flatMap((i) => i.words.slice(0, -1));
    expect(built).toEqual(expect.arrayContaining(['sdk/src', 'sandbox', 'common']));
    expect(build.instructions.some((i) => i.keyword === 'RUN' && /tsc -p tsconfig\.build\.json/.test(i.args))).toBe(true);
    expect((JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include).toContain(source.split('/')[0]);
  });
});

describe('.dockerignore', () => {
  const patterns = parseDockerignore(read('.dockerignore'));

  it('keeps node_modules, dist, git metadata and tests out of the build context', () => {
    for (const p of ['node_modules', 'dist', '.git', 'test', 'bench', 'common/src/config.test.ts', 'node_modules/.cache/x']) {
      expect([p, isIgnored(p, patterns)]).toEqual([p, true]);
    }
  });

  it('keeps everything the Dockerfiles copy from the context', () => {
    for (const file of ['Dockerfile', 'Dockerfile.simroom']) {
      const copies = parseDockerfile(read(file)).filter((i) => i.keyword === 'COPY' && i.flags.from === undefined);
      for (const source of copies.flatMap((i) => i.words.slice(0, -1))) {
        expect([file, source, isIgnored(source, patterns)]).toEqual([file, source, false]);
        expect([file, source, fs.existsSync(path.join(REPO_ROOT, source))]).toEqual([file, source, true]);
      }
    }
  });
});

describe('the Dockerfile linter', () => {
  const good = [
    'FROM node:22-bookworm-slim AS build',
    'RUN npm ci',
    'FROM node:22-bookworm-slim AS deps',
    'RUN npm ci --omit=dev',
    'FROM node:22-bookworm-slim',
    'COPY --from=deps /app/node_modules ./node_modules',
    'COPY --from=build /src/dist ./dist',
    'COPY package.json ./',
    'USER 10001',
    'CMD ["node", "dist/operator/src/main.js"]',
  ];
  const variant = (from: string, to: string): string => good.map((l) => (l === from ? to : l)).join('\n');

  it('passes a good Dockerfile, with continuations and comments', () => {
    expect(lintDockerfile(good.join('\n'), PRODUCT_RULES)).toEqual([]);
    const continued = good.join('\n').replace('RUN npm ci --omit=dev', 'RUN npm ci \\\n  # production only\n  --omit=dev');
    expect(lintDockerfile(continued, PRODUCT_RULES)).toEqual([]);
  });

  const bad: [string, string, RegExp][] = [
    ['a single stage', 'FROM node:22-bookworm-slim\nUSER 10001\nCMD ["node", "dist/operator/src/main.js"]', /multi-stage build expected/],
    ['a latest base', variant('FROM node:22-bookworm-slim AS build', 'FROM node:latest AS build'), /not pinned/],
    ['an untagged base', variant('FROM node:22-bookworm-slim AS build', 'FROM node AS build'), /not pinned/],
    ['another Node major', variant('FROM node:22-bookworm-slim', 'FROM node:20-alpine'), /does not match/],
    ['ADD of a URL', variant('RUN npm ci', 'ADD https://example.com/tool.tgz /tmp/'), /ADD of a URL/],
    ['no USER', variant('USER 10001', 'EXPOSE 8080'), /no USER/],
    ['USER root', variant('USER 10001', 'USER root'), /is root/],
    ['a named USER', variant('USER 10001', 'USER node'), /numeric/],
    ['the whole context copied', variant('COPY package.json ./', 'COPY . .'), /copies \. from the build context/],
    ['sources copied', variant('COPY package.json ./', 'COPY common ./common'), /copies common from the build context/],
    ['dev node_modules', variant('COPY --from=deps /app/node_modules ./node_modules', 'COPY --from=build /src/node_modules ./node_modules'), /not a production-only install/],
    ['an npm install in the runtime stage', variant('COPY package.json ./', 'RUN npm install'), /installs devDependencies/],
    ['a shell-form CMD', variant('CMD ["node", "dist/operator/src/main.js"]', 'CMD node dist/operator/src/main.js'), /shell form/],
    ['a shell-form HEALTHCHECK', variant('USER 10001', 'USER 10001\nHEALTHCHECK CMD curl -f http://localhost:8081/healthz'), /HEALTHCHECK should use the exec form/],
    ['a COPY from an unknown stage', variant('COPY --from=build /src/dist ./dist', 'COPY --from=builder /src/dist ./dist'), /names no earlier stage/],
  ];

  it.each(bad)('refuses %s', (_name, text, problem) => {
    const problems = lintDockerfile(text, PRODUCT_RULES);
    expect(problems.join('\n')).toMatch(problem);
  });
});
