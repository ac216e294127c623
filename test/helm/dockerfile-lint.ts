/**
 * An offline Dockerfile parser and the rules Roomkeeper's images follow. CI has no Docker engine,
 * so the images are checked by reading their Dockerfiles: multi-stage, pinned node:22 base, no
 * `latest`, no ADD of URLs, a non-root USER, an exec-form CMD, and a runtime stage that copies only
 * what it needs (no devDependencies, no sources).
 */

export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY... */
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  /** `--name=value` flags at the start of args (COPY --from=build, --chown=...). */
  flags: Record<string, string>;
  /** Words after the flags (JSON array items when the args are a JSON array). */
  words: string[];
  /** True when the args are a JSON array (exec form). */
  execForm: boolean;
  line: number;
}

export interface Stage {
  /** Base image or earlier stage name, as written in FROM. */
  base: string;
  /** `AS name`, if any. */
  name?: string;
  index: number;
  instructions: Instruction[];
}

/** Splits a Dockerfile into instructions: comments and parser directives dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  let buffer = '';
  let startLine = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const trimmed = raw.trim();
    if (buffer === '' && (trimmed === '' || trimmed.startsWith('#'))) continue;
    if (buffer !== '' && trimmed.startsWith('#')) continue; // comment lines inside a continuation
    if (buffer === '') startLine = i + 1;
    if (trimmed.endsWith('\\')) {
      buffer += `${trimmed.slice(0, -1)} `;
      continue;
    }
    buffer += trimmed;
    out.push(toInstruction(buffer, startLine));
    buffer = '';
  }
  if (buffer.trim() !== '') out.push(toInstruction(buffer, startLine));
  return out;
}

function toInstruction(text: string, line: number): Instruction {
  const m = /^(\S+)\s*(.*)$/s.exec(text.trim());
  const keyword = (m?.[1] ?? '').toUpperCase();
  const args = (m?.[2] ?? '').trim();
  const flags: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const f = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest);
    if (!f) break;
    flags[f[1]!] = f[2] ?? 'true';
    rest = rest.slice(f[0].length);
  }
  let words: string[] = rest === '' ? [] : rest.split(/\s+/);
  let execForm = false;
  if (rest.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(rest);
      if (Array.isArray(parsed) && parsed.every((w) => typeof w === 'string')) {
        words = parsed;
        execForm = true;
      }
    } catch {
      // not JSON: shell form
    }
  }
  return { keyword, args, flags, words, execForm, line };
}

/** Groups instructions into build stages; instructions before the first FROM (ARG) are dropped. */
export function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const [base = '', as, name] = ins.words;
      stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, index: stages.length, instructions: [] });
    } else if (stages.length > 0) {
      stages[stages.length - 1]!.instructions.push(ins);
    }
  }
  return stages;
}

export interface ImageRules {
  /** The base every FROM of an outside image must use, e.g. /^node:22([.-]|$)/. */
  baseImage: RegExp;
  /** Paths the runtime stage may COPY from the build context. */
  runtimeContextCopies: string[];
  /** Paths the runtime stage may COPY from earlier stages (matched on the source's last segment). */
  runtimeStageCopies: string[];
  /** The runtime stage's CMD, exec form. */
  cmd: string[];
}

/** Checks a Dockerfile against the rules; returns one message per problem (empty when clean). */
export function lintDockerfile(text: string, rules: ImageRules): string[] {
  const problems: string[] = [];
  const instructions = parseDockerfile(text);
  const stages = stagesOf(instructions);
  if (stages.length < 2) problems.push(`multi-stage build expected, found ${stages.length} stage(s)`);
  const stageNames = new Set<string>();

  for (const stage of stages) {
    const fromStage = stageNames.has(stage.base);
    if (!fromStage) {
      if (/:latest$/.test(stage.base) || !stage.base.includes(':')) problems.push(`stage ${stage.index}: base image ${stage.base} is not pinned (no tag or latest)`);
      if (!rules.baseImage.test(stage.base)) problems.push(`stage ${stage.index}: base image ${stage.base} does not match ${String(rules.baseImage)}`);
    }
    if (stage.name) stageNames.add(stage.name);
    for (const ins of stage.instructions) {
      if (ins.keyword === 'ADD' && ins.words.some((w) => /^(https?|git|ftp):\/\/|^git@/.test(w))) {
        problems.push(`line ${ins.line}: ADD of a URL (${ins.args}); download in a RUN with a checksum or COPY instead`);
      }
      const from = ins.flags.from;
      if (ins.keyword === 'COPY' && from !== undefined && !stageNames.has(from) && !/^[a-z0-9.-]+(\/[a-z0-9._-]+)*:[\w.-]+$/.test(from)) {
        problems.push(`line ${ins.line}: COPY --from=${from} names no earlier stage`);
      }
      if (/\blatest\b/.test(ins.args) && ins.keyword !== 'LABEL') problems.push(`line ${ins.line}: refers to a latest tag`);
    }
  }

  const runtime = stages[stages.length - 1];
  if (!runtime) return problems;
  const users = runtime.instructions.filter((i) => i.keyword === 'USER');
  const lastUser = users[users.length - 1];
  if (!lastUser) problems.push('runtime stage: no USER, the process would run as root');
  else if (/^(0|root)(:|$)/.test(lastUser.words[0] ?? '')) problems.push(`line ${lastUser.line}: USER ${lastUser.args} is root`);
  else if (!/^\d+(:\d+)?$/.test(lastUser.words[0] ?? '')) problems.push(`line ${lastUser.line}: USER should be numeric so runAsNonRoot can verify it`);

  const byName = new Map(stages.filter((s) => s.name).map((s) => [s.name!, s]));
  for (const ins of runtime.instructions) {
    if (ins.keyword === 'COPY' || ins.keyword === 'ADD') {
      const sources = ins.words.slice(0, -1);
      if (ins.flags.from !== undefined) {
        for (const src of sources) {
          const last = src.replace(/\/+$/, '').split('/').pop() ?? '';
          if (!rules.runtimeStageCopies.includes(last)) problems.push(`line ${ins.line}: runtime stage copies ${src} from ${ins.flags.from}; only ${rules.runtimeStageCopies.join(', ')} may come from other stages`);
          if (last === 'node_modules') {
            const provider = byName.get(ins.flags.from);
            const installs = provider?.instructions.filter((i) => i.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(i.args)) ?? [];
            if (installs.length === 0 || installs.some((i) => !/--omit=dev|--production\b/.test(i.args))) {
              problems.push(`line ${ins.line}: node_modules from stage ${ins.flags.from} is not a production-only install (npm ci --omit=dev)`);
            }
          }
        }
      } else {
        for (const src of sources) {
          const clean = src.replace(/^\.\//, '').replace(/\/+$/, '');
          if (!rules.runtimeContextCopies.includes(clean)) problems.push(`line ${ins.line}: runtime stage copies ${src} from the build context; only ${rules.runtimeContextCopies.join(', ')} are allowed`);
        }
      }
    }
    if (ins.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(ins.args) && !/--omit=dev|--production\b/.test(ins.args)) {
      problems.push(`line ${ins.line}: runtime stage installs devDependencies`);
    }
    if (ins.keyword === 'HEALTHCHECK' && !(ins.words[0] === 'NONE' || /\bCMD\s*\[/.test(ins.args))) {
      problems.push(`line ${ins.line}: HEALTHCHECK should use the exec form (CMD [...]) or NONE`);
    }
  }

  const cmds = runtime.instructions.filter((i) => i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT');
  const cmd = cmds.filter((i) => i.keyword === 'CMD').pop();
  for (const c of cmds) if (!c.execForm) problems.push(`line ${c.line}: ${c.keyword} in shell form needs a shell; use the exec form ["node", ...]`);
  if (!cmd) problems.push('runtime stage: no CMD');
  else if (JSON.stringify(cmd.words) !== JSON.stringify(rules.cmd)) problems.push(`line ${cmd.line}: CMD ${cmd.args}, expected ${JSON.stringify(rules.cmd)}`);
  return problems;
}

/** Patterns of a .dockerignore file (comments and blank lines dropped). */
export function parseDockerignore(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** True when a context path is excluded by a plain (glob-free) pattern or a `**\/` suffix glob. */
export function isIgnored(contextPath: string, patterns: string[]): boolean {
  const p = contextPath.replace(/^\.\//, '').replace(/\/+$/, '');
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\.?\//, '').replace(/\/+$/, '');
    let matches: boolean;
    if (pattern.startsWith('**/')) {
      const tail = pattern.slice(3);
      const re = new RegExp(`(^|/)${tail.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`);
      matches = re.test(p);
    } else {
      const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`);
      matches = re.test(p);
    }
    if (matches) ignored = !negate;
  }
  return ignored;
}
