/**
 * Derives the Kubernetes permissions a component needs from its code, with the TypeScript
 * compiler's type checker: which client-node API methods, custom-object calls and informers are
 * reachable from the component's entry point, and the (group, resource, verb) each one needs.
 *
 * How it works, in three passes over one `ts.Program`:
 * 1. Reachability (a call graph by rapid type analysis): starting at the entry file, every function,
 *    method, accessor, constructor and `const` initializer that is referenced from reached code is
 *    reached. A member reached through an interface or base class reaches the same-named member of
 *    every instantiated class (one whose constructor is reached) that conforms to it. Closures are
 *    walked with their enclosing function. Only repo files count (`sourceDirs`, no `*.test.ts`).
 * 2. Kubernetes calls in reached code: methods on a client-node `...Api` object, `makeInformer`,
 *    `new ListWatch` and `Watch#watch`.
 * 3. Values: group, plural and watch path arguments are resolved to string literals through the
 *    checker's literal types, `const` initializers, object literals and, for a parameter, the
 *    arguments at every reached call site. A value that does not resolve is an error (no guessing).
 */
import * as path from 'node:path';
import * as ts from 'typescript';

export interface KubeUse {
  /** API group, '' for core. */
  group: string;
  /** Resource, with subresource as `pods/status`. */
  resource: string;
  verb: string;
  /** `file:line` of every call that needs it (repo-relative), sorted. */
  locations: string[];
}

export class UnresolvedKubeCallError extends Error {
  constructor(readonly location: string, detail: string) {
    super(`${location}: ${detail}`);
    this.name = 'UnresolvedKubeCallError';
  }
}

export interface KubeCallAnalyzerOptions {
  /** Repository root; locations are reported relative to it. */
  rootDir: string;
  /** tsconfig.json whose compiler options are used. */
  tsconfigPath: string;
  /** Every entry file that will be analysed (one program is built for all of them). */
  entries: string[];
  /** Repo-relative folders whose code is followed (e.g. `operator/`, `common/`); `usesOf` may override. */
  sourceDirs: string[];
}

/** Group of each client-node API class, by its name without the `Object`/`Promise` prefix. */
const API_GROUPS: Record<string, string> = {
  CoreV1Api: '',
  CoordinationV1Api: 'coordination.k8s.io',
  EventsV1Api: 'events.k8s.io',
  AppsV1Api: 'apps',
  BatchV1Api: 'batch',
  PolicyV1Api: 'policy',
  RbacAuthorizationV1Api: 'rbac.authorization.k8s.io',
  NetworkingV1Api: 'networking.k8s.io',
  StorageV1Api: 'storage.k8s.io',
  ApiextensionsV1Api: 'apiextensions.k8s.io',
  AutoscalingV1Api: 'autoscaling',
  AutoscalingV2Api: 'autoscaling',
  DiscoveryV1Api: 'discovery.k8s.io',
  SchedulingV1Api: 'scheduling.k8s.io',
  NodeV1Api: 'node.k8s.io',
  CertificatesV1Api: 'certificates.k8s.io',
  AdmissionregistrationV1Api: 'admissionregistration.k8s.io',
  AuthenticationV1Api: 'authentication.k8s.io',
  AuthorizationV1Api: 'authorization.k8s.io',
};

const METHOD_VERBS: Record<string, string> = {
  list: 'list', read: 'get', get: 'get', create: 'create', replace: 'update', patch: 'patch', delete: 'delete', deleteCollection: 'deletecollection',
};

/** Subresource suffixes of generated method names (`patchNamespacedPodStatus`). */
const SUBRESOURCES: Record<string, string> = {
  Status: 'status', Scale: 'scale', Log: 'log', Eviction: 'eviction', Binding: 'binding', Ephemeralcontainers: 'ephemeralcontainers', Resize: 'resize',
};

/** Kinds whose resource is not the regular plural. */
const PLURAL_EXCEPTIONS: Record<string, string> = { endpoints: 'endpoints' };

/** `Pod` -> `pods`, `NetworkPolicy` -> `networkpolicies`, `IngressClass` -> `ingressclasses`. */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  const exception = PLURAL_EXCEPTIONS[lower];
  if (exception) return exception;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

export interface ParsedApiMethod { verb: string; resource: string }

/**
 * The verb and resource of a generated client-node method: `verb` + `Namespaced`? + Kind +
 * `ForAllNamespaces`? + subresource? (`createNamespacedPod`, `listPodForAllNamespaces`,
 * `patchNamespacedPodStatus`, `readNamespace`). Undefined when the name does not follow it.
 */
export function parseApiMethod(method: string): ParsedApiMethod | undefined {
  const m = /^(deleteCollection|list|read|create|replace|patch|delete)(Namespaced)?([A-Z][A-Za-z0-9]*?)(ForAllNamespaces)?$/.exec(method);
  if (!m) return undefined;
  const verb = METHOD_VERBS[m[1] as string] as string;
  let kind = m[3] as string;
  let subresource: string | undefined;
  for (const [suffix, sub] of Object.entries(SUBRESOURCES)) {
    if (kind.endsWith(suffix) && kind.length > suffix.length) {
      kind = kind.slice(0, -suffix.length);
      subresource = sub;
      break;
    }
  }
  const resource = pluralOf(kind);
  return { verb, resource: subresource ? `${resource}/${subresource}` : resource };
}

/** `getClusterCustomObjectStatus` -> verb get, subresource status. */
function parseCustomObjectMethod(method: string): { verb: string; subresource?: string } | undefined {
  const m = /^(get|list|create|replace|patch|delete|deleteCollection)(Cluster|Namespaced)CustomObject(Status|Scale)?$/.exec(method);
  if (!m) return undefined;
  return { verb: METHOD_VERBS[m[1] as string] as string, ...(m[3] ? { subresource: (SUBRESOURCES[m[3]] as string) } : {}) };
}

/** Marks the part of a resolved string that came from a value we could not know (a namespace). */
const UNKNOWN = '\u0000';

/** `/api/v1/pods`, `/apis/roomkeeper.io/v1/namespaces/x/gamerooms` -> group and resource. */
export function parseWatchPath(watchPath: string): { group: string; resource: string } | undefined {
  const parts = watchPath.split('?')[0]!.split('/').filter((p) => p !== '');
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] as string;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  if (rest.length !== 1) return undefined;
  const resource = rest[0] as string;
  if (group.includes(UNKNOWN) || resource.includes(UNKNOWN)) return undefined;
  return { group, resource };
}

type FunctionLike = ts.FunctionLikeDeclaration;

interface FoundUse { group: string; resource: string; verb: string; node: ts.Node; why?: string }

/** One program, many analyses: build it once, then call `usesOf(entry)` per component. */
export class KubeCallAnalyzer {
  readonly program: ts.Program;
  private readonly checker: ts.TypeChecker;

  constructor(private readonly opts: KubeCallAnalyzerOptions) {
    const read = ts.readConfigFile(opts.tsconfigPath, (f) => ts.sys.readFile(f));
    if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(opts.tsconfigPath));
    this.program = ts.createProgram({ rootNames: opts.entries, options: { ...parsed.options, noEmit: true } });
    this.checker = this.program.getTypeChecker();
  }

  /** The sorted permissions the code reachable from `entry` needs. */
  usesOf(entry: string, sourceDirs: string[] = this.opts.sourceDirs): KubeUse[] {
    const source = this.program.getSourceFile(entry);
    if (!source) throw new Error(`${entry} is not in the program`);
    const run = new Analysis(this.checker, { rootDir: this.opts.rootDir, sourceDirs }, source);
    const found = run.analyse();
    const byKey = new Map<string, KubeUse>();
    for (const f of found) {
      const key = `${f.group}|${f.resource}|${f.verb}`;
      const use = byKey.get(key) ?? { group: f.group, resource: f.resource, verb: f.verb, locations: [] };
      const loc = run.location(f.node) + (f.why ? ` (${f.why})` : '');
      if (!use.locations.includes(loc)) use.locations.push(loc);
      byKey.set(key, use);
    }
    return [...byKey.values()]
      .map((u) => ({ ...u, locations: u.locations.sort() }))
      .sort((a, b) => `${a.group}|${a.resource}|${a.verb}`.localeCompare(`${b.group}|${b.resource}|${b.verb}`));
  }
}

/** The state of one component's analysis. */
class Analysis {
  private readonly reached = new Set<ts.Node>();
  private readonly queue: ts.Node[] = [];
  private readonly instantiated = new Set<ts.ClassLikeDeclaration>();
  /** Members reached through an interface, type or class: dispatched to instantiated classes. */
  private readonly virtuals: { container: ts.Node; name: string }[] = [];
  private readonly virtualKeys = new Set<string>();
  private readonly callSites = new Map<ts.Node, (ts.CallExpression | ts.NewExpression)[]>();
  private readonly kubeCalls: (ts.CallExpression | ts.NewExpression)[] = [];
  private readonly apiReferences: (ts.PropertyAccessExpression | ts.ElementAccessExpression)[] = [];

  /** When set, the string literals a resolution ends at are collected here (for locations). */
  private leafSink: { node: ts.Node; values: string[] }[] | undefined;

  constructor(private readonly checker: ts.TypeChecker, private readonly opts: { rootDir: string; sourceDirs: string[] }, private readonly entry: ts.SourceFile) {}

  location(node: ts.Node): string {
    const sf = node.getSourceFile();
    const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
    return `${path.relative(this.opts.rootDir, sf.fileName)}:${line + 1}`;
  }

  analyse(): FoundUse[] {
    this.reachFileTopLevel(this.entry);
    for (const file of this.importClosure(this.entry)) {
      if (file !== this.entry) this.reachFileTopLevel(file);
    }
    while (this.queue.length > 0) {
      const node = this.queue.shift() as ts.Node;
      this.walk(node);
    }
    const out: FoundUse[] = [];
    for (const call of this.kubeCalls) out.push(...this.usesOfCall(call));
    for (const ref of this.apiReferences) out.push(...this.usesOfReference(ref));
    return out;
  }

  // ---------------------------------------------------------------- reachability

  private isRepoFile(sf: ts.SourceFile): boolean {
    if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) return false;
    if (/\.test\.ts$/.test(sf.fileName)) return false;
    const rel = path.relative(this.opts.rootDir, sf.fileName).split(path.sep).join('/');
    return this.opts.sourceDirs.some((d) => rel.startsWith(d.endsWith('/') ? d : `${d}/`));
  }

  private importClosure(start: ts.SourceFile): ts.SourceFile[] {
    const seen = new Set<ts.SourceFile>([start]);
    const todo = [start];
    while (todo.length > 0) {
      const sf = todo.pop() as ts.SourceFile;
      for (const stmt of sf.statements) {
        if ((ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt)) && stmt.moduleSpecifier) {
          if (ts.isImportDeclaration(stmt) && stmt.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword) continue;
          const sym = this.checker.getSymbolAtLocation(stmt.moduleSpecifier);
          const decl = sym?.valueDeclaration ?? sym?.declarations?.[0];
          const target = decl?.getSourceFile();
          if (target && !seen.has(target) && this.isRepoFile(target)) {
            seen.add(target);
            todo.push(target);
          }
        }
      }
    }
    return [...seen];
  }

  /** Statements that run when a module is loaded (declarations are reached only when used). */
  private reachFileTopLevel(sf: ts.SourceFile): void {
    for (const stmt of sf.statements) {
      if (ts.isFunctionDeclaration(stmt) || ts.isClassDeclaration(stmt) || ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt)
        || ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt) || ts.isVariableStatement(stmt) || ts.isEnumDeclaration(stmt)
        || ts.isModuleDeclaration(stmt) || ts.isImportEqualsDeclaration(stmt)) continue;
      this.reach(stmt);
    }
  }

  private reach(node: ts.Node | undefined): void {
    if (!node || this.reached.has(node)) return;
    this.reached.add(node);
    this.queue.push(node);
  }

  private walk(root: ts.Node): void {
    const visit = (node: ts.Node): void => {
      if (ts.isTypeNode(node) && !ts.isExpressionWithTypeArguments(node)) return;
      if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isImportDeclaration(node)) return;
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) this.onCall(node);
      if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) this.onReference(node);
      if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) this.onMemberAccess(node);
      // A class declared inside reached code is reached only when used, like a top-level one.
      if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node !== root) return;
      ts.forEachChild(node, visit);
    };
    if (ts.isClassDeclaration(root) || ts.isClassExpression(root)) return;
    visit(root);
  }

  /**
   * A client-node API method used without being called here (`list: core.listNode`, `.bind`) is a
   * use too; `obj[name]` on an API object or a repo object reaches every member it may name.
   */
  private onMemberAccess(node: ts.PropertyAccessExpression | ts.ElementAccessExpression): void {
    const called = (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent)) && node.parent.expression === node;
    if (ts.isElementAccessExpression(node)) {
      if (ts.isStringLiteralLike(node.argumentExpression) || ts.isNumericLiteral(node.argumentExpression)) return;
      if (this.apiClassOf(node.expression)?.endsWith('Api')) {
        this.apiReferences.push(node);
        return;
      }
      const type = this.checker.getTypeAtLocation(node.expression);
      for (const prop of this.checker.getPropertiesOfType(this.checker.getNonNullableType(type))) {
        for (const decl of prop.declarations ?? []) if (this.isRepoFile(decl.getSourceFile())) this.reachDeclaration(decl);
      }
      return;
    }
    if (called) return;
    const decl = this.resolveSymbol(node.name)?.declarations?.[0];
    if (!decl || !decl.getSourceFile().fileName.includes('/@kubernetes/client-node/')) return;
    if (!(ts.isMethodDeclaration(decl) || ts.isMethodSignature(decl))) return;
    if (this.apiClassOf(node.expression)?.endsWith('Api') && !this.apiReferences.includes(node)) this.apiReferences.push(node);
  }

  private resolveSymbol(node: ts.Node): ts.Symbol | undefined {
    let sym = this.checker.getSymbolAtLocation(node);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = this.checker.getAliasedSymbol(sym);
    return sym;
  }

  private onReference(node: ts.Identifier | ts.PrivateIdentifier): void {
    const sym = this.resolveSymbol(node);
    if (!sym) return;
    for (const decl of sym.declarations ?? []) {
      if (!this.isRepoFile(decl.getSourceFile())) continue;
      this.reachDeclaration(decl);
    }
  }

  private reachDeclaration(decl: ts.Declaration): void {
    if (ts.isClassDeclaration(decl) || ts.isClassExpression(decl)) {
      this.instantiate(decl);
    } else if (ts.isFunctionDeclaration(decl) || ts.isFunctionExpression(decl) || ts.isArrowFunction(decl)) {
      this.reach(decl);
    } else if (ts.isVariableDeclaration(decl)) {
      this.reach(decl.initializer);
    } else if (ts.isMethodDeclaration(decl) || ts.isGetAccessorDeclaration(decl) || ts.isSetAccessorDeclaration(decl) || ts.isPropertyDeclaration(decl)
      || ts.isMethodSignature(decl) || ts.isPropertySignature(decl)) {
      if (ts.isPropertyDeclaration(decl)) this.reach(decl.initializer);
      else if (!ts.isMethodSignature(decl) && !ts.isPropertySignature(decl)) this.reach(decl);
      const container = decl.parent;
      const name = (ts.isIdentifier(decl.name) || ts.isStringLiteral(decl.name) || ts.isPrivateIdentifier(decl.name)) ? decl.name.text : undefined;
      if (name && (ts.isClassLike(container) || ts.isInterfaceDeclaration(container) || ts.isTypeLiteralNode(container))) this.addVirtual(container, name);
    }
  }

  private instantiate(cls: ts.ClassLikeDeclaration): void {
    if (this.instantiated.has(cls)) return;
    this.instantiated.add(cls);
    for (const member of cls.members) {
      if (ts.isConstructorDeclaration(member) || ts.isClassStaticBlockDeclaration(member)) this.reach(member);
      else if (ts.isPropertyDeclaration(member)) this.reach(member.initializer);
    }
    for (const base of this.baseClasses(cls)) this.instantiate(base);
    for (const clause of cls.heritageClauses ?? []) for (const t of clause.types) this.reach(t.expression);
    for (const v of this.virtuals) this.dispatch(v.container, v.name, cls);
  }

  private addVirtual(container: ts.Node, name: string): void {
    const key = `${container.pos}:${container.getSourceFile().fileName}:${name}`;
    if (this.virtualKeys.has(key)) return;
    this.virtualKeys.add(key);
    this.virtuals.push({ container, name });
    for (const cls of this.instantiated) this.dispatch(container, name, cls);
  }

  /** Reaches `cls`'s member `name` when `cls` may be the object behind `container`'s member. */
  private dispatch(container: ts.Node, name: string, cls: ts.ClassLikeDeclaration): void {
    if (!this.conforms(cls, container)) return;
    for (const c of [cls, ...this.baseClasses(cls)]) {
      for (const member of c.members) {
        const memberName = member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name) || ts.isPrivateIdentifier(member.name)) ? member.name.text : undefined;
        if (memberName !== name) continue;
        if (ts.isPropertyDeclaration(member)) this.reach(member.initializer);
        else if (ts.isMethodDeclaration(member) || ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) this.reach(member);
      }
    }
  }

  private baseClasses(cls: ts.ClassLikeDeclaration): ts.ClassLikeDeclaration[] {
    const out: ts.ClassLikeDeclaration[] = [];
    for (const clause of cls.heritageClauses ?? []) {
      if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
      for (const t of clause.types) {
        const sym = this.resolveSymbol(t.expression);
        for (const d of sym?.declarations ?? []) {
          if ((ts.isClassDeclaration(d) || ts.isClassExpression(d)) && this.isRepoFile(d.getSourceFile())) out.push(d, ...this.baseClasses(d));
        }
      }
    }
    return out;
  }

  /** Does `cls` (or a base) extend the class `container`, or have every required member of the interface/type? */
  private conforms(cls: ts.ClassLikeDeclaration, container: ts.Node): boolean {
    if (ts.isClassLike(container)) return cls === container || this.baseClasses(cls).includes(container);
    const names = new Set<string>();
    for (const c of [cls, ...this.baseClasses(cls)]) {
      for (const m of c.members) if (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) names.add(m.name.text);
    }
    const members = ts.isInterfaceDeclaration(container) || ts.isTypeLiteralNode(container) ? container.members : undefined;
    if (!members) return false;
    return members.every((m) => m.questionToken !== undefined || !m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) || names.has(m.name.text));
  }

  private onCall(call: ts.CallExpression | ts.NewExpression): void {
    const callee = call.expression;
    const sym = this.resolveSymbol(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
    for (const decl of sym?.declarations ?? []) {
      const sf = decl.getSourceFile();
      if (this.isRepoFile(sf)) {
        for (const target of this.callTargets(decl)) {
          const list = this.callSites.get(target) ?? [];
          if (!list.includes(call)) list.push(call);
          this.callSites.set(target, list);
        }
      } else if (sf.fileName.includes('/@kubernetes/client-node/')) {
        if (!this.kubeCalls.includes(call)) this.kubeCalls.push(call);
        return;
      }
    }
  }

  /** The function-like nodes a call to `decl` runs (for call-site lookup of parameters). */
  private callTargets(decl: ts.Declaration): ts.Node[] {
    if (ts.isVariableDeclaration(decl) && decl.initializer) {
      const init = skipOuter(decl.initializer);
      return ts.isArrowFunction(init) || ts.isFunctionExpression(init) ? [init] : [];
    }
    if (ts.isClassDeclaration(decl) || ts.isClassExpression(decl)) {
      return [decl, ...decl.members.filter(ts.isConstructorDeclaration)];
    }
    if (ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl)) return [decl];
    return [];
  }

  // ---------------------------------------------------------------- Kubernetes calls

  private usesOfCall(call: ts.CallExpression | ts.NewExpression): FoundUse[] {
    const callee = call.expression;
    const sym = this.resolveSymbol(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
    const name = sym?.getName() ?? '';
    const args = call.arguments ?? ts.factory.createNodeArray();
    // Informers and watches.
    if (ts.isCallExpression(call) && name === 'makeInformer') return this.watchUses(call, args[1], ['list', 'watch']);
    if (ts.isNewExpression(call) && name === 'ListWatch') return this.watchUses(call, args[0], ['list', 'watch']);
    if (ts.isNewExpression(call)) return [];
    if (!ts.isPropertyAccessExpression(callee)) return [];
    const apiClass = this.apiClassOf(callee.expression);
    if (apiClass === 'Watch' && name === 'watch') return this.watchUses(call, args[0], ['watch']);
    if (apiClass === undefined || apiClass === 'Watch' || apiClass === 'KubeConfig') return [];
    if (name === 'getAPIResources' || name === 'getAPIGroup' || name === 'getAPIVersions') return [];
    if (apiClass === 'CustomObjectsApi') return this.customObjectUses(call, name);
    const group = API_GROUPS[apiClass];
    const parsed = parseApiMethod(name);
    if (group === undefined || !parsed) throw new UnresolvedKubeCallError(this.location(call), `unknown Kubernetes API call ${apiClass}.${name}`);
    const uses: FoundUse[] = [{ group, resource: parsed.resource, verb: parsed.verb, node: call }];
    uses.push(...this.ownershipUses(call, group, parsed.resource, parsed.verb));
    return uses;
  }

  /** A method of a typed API taken as a value: its name says the permission; anything else is unknown. */
  private usesOfReference(ref: ts.PropertyAccessExpression | ts.ElementAccessExpression): FoundUse[] {
    const apiClass = this.apiClassOf(ref.expression) as string;
    const name = ts.isPropertyAccessExpression(ref) ? ref.name.text : undefined;
    const group = API_GROUPS[apiClass];
    const parsed = name ? parseApiMethod(name) : undefined;
    if (group === undefined || !parsed || apiClass === 'CustomObjectsApi') {
      throw new UnresolvedKubeCallError(this.location(ref), `cannot tell which Kubernetes call ${ref.getText()} makes`);
    }
    return [{ group, resource: parsed.resource, verb: parsed.verb, node: ref, why: 'method reference' }];
  }

  /** The client-node class of `expr`'s type (`CoreV1Api`, `CustomObjectsApi`, `Watch`...), if any. */
  private apiClassOf(expr: ts.Expression): string | undefined {
    const type = this.checker.getNonNullableType(this.checker.getTypeAtLocation(expr));
    const sym = type.getSymbol() ?? type.aliasSymbol;
    const decl = sym?.declarations?.[0];
    if (!sym || !decl || !decl.getSourceFile().fileName.includes('/@kubernetes/client-node/')) return undefined;
    const raw = sym.getName();
    const name = raw.replace(/^(Object|Promise|Observable)(?=[A-Z].*Api$)/, '');
    if (name.endsWith('Api') || name === 'Watch' || name === 'KubeConfig') return name;
    return undefined;
  }

  private customObjectUses(call: ts.CallExpression, method: string): FoundUse[] {
    const parsed = parseCustomObjectMethod(method);
    if (!parsed) throw new UnresolvedKubeCallError(this.location(call), `unknown CustomObjectsApi call ${method}`);
    const arg = call.arguments[0];
    const objects = arg ? this.objectLiterals(arg, new Set()) : undefined;
    if (!objects || objects.length === 0) throw new UnresolvedKubeCallError(this.location(call), `${method}: the request is not an object literal`);
    const uses: FoundUse[] = [];
    for (const obj of objects) {
      const groups = this.propertyStrings(obj, 'group', call);
      const plurals = this.propertyStrings(obj, 'plural', call);
      for (const group of groups) {
        for (const plural of plurals) {
          const resource = parsed.subresource ? `${plural}/${parsed.subresource}` : plural;
          uses.push({ group, resource, verb: parsed.verb, node: call });
          uses.push(...this.ownershipUses(call, group, resource, parsed.verb));
        }
      }
    }
    return uses;
  }

  private propertyStrings(obj: ts.ObjectLiteralExpression, name: string, call: ts.Node): string[] {
    const sources = this.propertySources(obj, name);
    const values = sources && this.stringsOfAll(sources, new Set());
    if (!values || values.some((v) => v.includes(UNKNOWN))) {
      throw new UnresolvedKubeCallError(this.location(call), `cannot resolve \`${name}\` to string literals`);
    }
    return values;
  }

  private watchUses(call: ts.CallExpression | ts.NewExpression, pathArg: ts.Expression | undefined, verbs: string[]): FoundUse[] {
    this.leafSink = [];
    const paths = pathArg ? this.strings(pathArg, new Set()) : undefined;
    const leaves = this.leafSink;
    this.leafSink = undefined;
    if (!paths) throw new UnresolvedKubeCallError(this.location(call), 'cannot resolve the watch path to string literals');
    const uses: FoundUse[] = [];
    for (const p of paths) {
      const parsed = parseWatchPath(p);
      if (!parsed) throw new UnresolvedKubeCallError(this.location(call), `cannot read a resource from watch path ${JSON.stringify(p.replaceAll(UNKNOWN, '*'))}`);
      // Name where the path was written too: the informer call itself is usually in a shared helper.
      const names = (v: string) => v === parsed.resource || v.endsWith(`/${parsed.resource}`);
      const origins = [...new Set(leaves.filter((l) => l.values.some(names)).map((l) => this.location(l.node)))];
      const why = origins.length > 0 ? `watch; path from ${origins.join(', ')}` : 'watch';
      for (const verb of verbs) uses.push({ ...parsed, verb, node: call, why });
    }
    return uses;
  }

  /**
   * Permissions the OwnerReferencesPermissionEnforcement admission plugin adds to a write (it is on
   * in OpenShift and many hardened clusters; kube-apiserver's plugin/pkg/admission/gc):
   * - writing an object that sets `metadata.ownerReferences` needs `delete` on that object
   *   ("cannot set an ownerRef on a resource you can't delete");
   * - setting `blockOwnerDeletion: true` in a reference needs `update` on the OWNER's `finalizers`
   *   subresource ("cannot set blockOwnerDeletion if an ownerReference refers to a resource you
   *   can't set finalizers on").
   * Writing `metadata.finalizers` of an object itself needs nothing beyond the write's own verb:
   * the plugin does not look at finalizers, and no other admission step asks for `<resource>/finalizers`.
   * Only create, update and patch bodies are searched (through consts, helper return values and
   * call-site arguments).
   */
  private ownershipUses(call: ts.CallExpression, group: string, resource: string, verb: string): FoundUse[] {
    if (!['create', 'update', 'patch'].includes(verb) || resource.includes('/')) return [];
    const arg = call.arguments[0];
    const requests = arg ? this.objectLiterals(arg, new Set()) ?? [] : [];
    const objects: ts.ObjectLiteralExpression[] = [];
    for (const req of requests) {
      const body = this.propertySources(req, 'body');
      for (const b of body ?? []) this.deepObjects(b, objects, new Set(), 0);
    }
    const uses: FoundUse[] = [];
    for (const obj of objects) {
      if (this.propertySources(obj, 'ownerReferences')) {
        uses.push({ group, resource, verb: 'delete', node: call, why: 'sets ownerReferences' });
      }
      const block = this.propertySources(obj, 'blockOwnerDeletion');
      if (block && block.some((b) => this.isTrue(b)) && this.propertySources(obj, 'kind')) {
        const kinds = this.propertyStrings(obj, 'kind', call);
        const apiVersions = this.propertyStrings(obj, 'apiVersion', call);
        for (const kind of kinds) {
          for (const apiVersion of apiVersions) {
            const ownerGroup = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
            uses.push({ group: ownerGroup, resource: `${pluralOf(kind)}/finalizers`, verb: 'update', node: call, why: `blockOwnerDeletion on its ${kind} owner` });
          }
        }
      }
    }
    return uses;
  }

  private isTrue(expr: ts.Expression): boolean {
    const e = skipOuter(expr);
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    const type = this.checker.getTypeAtLocation(e);
    return (type.flags & ts.TypeFlags.BooleanLiteral) !== 0 && this.checker.typeToString(type) === 'true';
  }

  // ---------------------------------------------------------------- values

  /** Every object literal `expr` may evaluate to, following data flow; undefined when unknown. */
  private objectLiterals(expr: ts.Expression, active: Set<ts.Node>): ts.ObjectLiteralExpression[] | undefined {
    const e = skipOuter(expr);
    if (ts.isObjectLiteralExpression(e)) return [e];
    if (active.has(e)) return undefined;
    active.add(e);
    try {
      if (ts.isConditionalExpression(e)) return concatDefined([this.objectLiterals(e.whenTrue, active), this.objectLiterals(e.whenFalse, active)]);
      const sources = this.sources(e, active);
      if (!sources) return undefined;
      return concatDefined(sources.map((s) => this.objectLiterals(s, active)));
    } finally {
      active.delete(e);
    }
  }

  /** The expressions a property `name` of an object literal may hold (spreads included). */
  private propertySources(obj: ts.ObjectLiteralExpression, name: string): ts.Expression[] | undefined {
    let found: ts.Expression[] | undefined;
    for (const p of obj.properties) {
      if (ts.isPropertyAssignment(p) && propertyNameText(p.name) === name) found = [p.initializer];
      else if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) found = [p.name];
      else if (ts.isSpreadAssignment(p)) {
        for (const spread of this.objectLiterals(p.expression, new Set()) ?? []) {
          const inner = this.propertySources(spread, name);
          if (inner) found = [...(found ?? []), ...inner];
        }
      }
    }
    return found;
  }

  /** One step of data flow back from `expr`: what it was assigned from. */
  private sources(expr: ts.Expression, active: Set<ts.Node>): ts.Expression[] | undefined {
    if (ts.isIdentifier(expr)) {
      const shorthand = ts.isShorthandPropertyAssignment(expr.parent) && expr.parent.name === expr
        ? this.checker.getShorthandAssignmentValueSymbol(expr.parent) : undefined;
      const sym = shorthand ?? this.resolveSymbol(expr);
      return sym ? this.symbolSources(sym, active) : undefined;
    }
    if (ts.isPropertyAccessExpression(expr)) {
      const name = expr.name.text;
      const sym = this.resolveSymbol(expr.name);
      const decl = sym?.declarations?.[0];
      // `this.options` where `options` is a constructor parameter property.
      if (decl && ts.isParameter(decl)) return this.symbolSources(sym, active);
      const objs = this.objectLiterals(expr.expression, active);
      if (!objs) return undefined;
      return concatDefined(objs.map((o) => this.propertySources(o, name)));
    }
    // `PLURALS[kind]`: every property the key can name (the key resolved like any other string).
    if (ts.isElementAccessExpression(expr)) {
      const objs = this.objectLiterals(expr.expression, active);
      // A parameter key: the values its call sites pass, narrower than its declared union type.
      const arg = skipOuter(expr.argumentExpression);
      const passed = ts.isIdentifier(arg) ? this.sources(arg, active) : undefined;
      const keys = (passed && passed.length > 0 ? this.stringsOfAll(passed, active) : undefined) ?? this.strings(arg, active);
      if (!objs || !keys) return undefined;
      const found = keys.map((key) => concatDefined(objs.map((o) => this.propertySources(o, key))));
      return found.some((f) => f === undefined) ? undefined : found.flatMap((f) => f ?? []);
    }
    if (ts.isCallExpression(expr)) {
      const sym = this.resolveSymbol(ts.isPropertyAccessExpression(expr.expression) ? expr.expression.name : expr.expression);
      const out: ts.Expression[] = [];
      for (const decl of sym?.declarations ?? []) {
        if (!this.isRepoFile(decl.getSourceFile())) return undefined;
        for (const fn of this.callTargets(decl)) {
          if (ts.isFunctionLike(fn)) out.push(...returnedExpressions(fn as FunctionLike));
        }
      }
      return out.length > 0 ? out : undefined;
    }
    if (ts.isAwaitExpression(expr)) return [expr.expression];
    if (ts.isBinaryExpression(expr) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(expr.operatorToken.kind)) return [expr.left, expr.right];
    return undefined;
  }

  private symbolSources(sym: ts.Symbol, active: Set<ts.Node>): ts.Expression[] | undefined {
    const decl = sym.valueDeclaration ?? sym.declarations?.[0];
    if (!decl) return undefined;
    if (ts.isVariableDeclaration(decl)) {
      if (!decl.initializer) return undefined;
      if (ts.isIdentifier(decl.name)) return [decl.initializer];
      return undefined;
    }
    if (ts.isParameter(decl)) return this.argumentsFor(decl);
    if (ts.isBindingElement(decl)) {
      const pattern = decl.parent;
      const key = decl.propertyName ? propertyNameText(decl.propertyName) : ts.isIdentifier(decl.name) ? decl.name.text : undefined;
      if (!key || !ts.isObjectBindingPattern(pattern)) return undefined;
      const holder = pattern.parent;
      let objs: ts.ObjectLiteralExpression[] | undefined;
      if (ts.isVariableDeclaration(holder) && holder.initializer) objs = this.objectLiterals(holder.initializer, active);
      else if (ts.isParameter(holder)) objs = concatDefined((this.argumentsFor(holder) ?? []).map((a) => this.objectLiterals(a, active)));
      if (!objs) return undefined;
      return concatDefined(objs.map((o) => this.propertySources(o, key)));
    }
    if (ts.isPropertyAssignment(decl)) return [decl.initializer];
    if (ts.isShorthandPropertyAssignment(decl)) return [decl.name];
    return undefined;
  }

  /** The argument passed for `param` at every reached call site of its function. */
  private argumentsFor(param: ts.ParameterDeclaration): ts.Expression[] | undefined {
    const fn = param.parent;
    const index = fn.parameters.indexOf(param);
    const targets: ts.Node[] = [fn];
    if (ts.isConstructorDeclaration(fn)) targets.push(fn.parent);
    const calls = [...new Set(targets.flatMap((t) => this.callSites.get(t) ?? []))];
    if (calls.length === 0) return undefined;
    const out: ts.Expression[] = [];
    for (const call of calls) {
      const args = call.arguments ?? [];
      if (args.slice(0, index + 1).some(ts.isSpreadElement)) return undefined;
      const arg = args[index];
      if (arg) out.push(arg);
      else if (param.initializer) out.push(param.initializer);
      else return undefined;
    }
    return out;
  }

  /** Every string `expr` may be; UNKNOWN marks unknowable parts; undefined when not resolvable. */
  private strings(expr: ts.Expression, active: Set<ts.Node>): string[] | undefined {
    const e = skipOuter(expr);
    const literal = this.literalStrings(e) ?? (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) ? [e.text] : undefined);
    if (literal) {
      this.leafSink?.push({ node: e, values: literal });
      return literal;
    }
    if (active.has(e)) return undefined;
    active.add(e);
    try {
      return this.stringsOf(e, active);
    } finally {
      active.delete(e);
    }
  }

  private stringsOf(e: ts.Expression, active: Set<ts.Node>): string[] | undefined {
    if (ts.isTemplateExpression(e)) {
      let acc = [e.head.text];
      for (const span of e.templateSpans) {
        const values = this.strings(span.expression, active) ?? [UNKNOWN];
        acc = acc.flatMap((a) => values.map((v) => a + v + span.literal.text));
      }
      return acc;
    }
    if (ts.isConditionalExpression(e)) {
      const a = this.strings(e.whenTrue, active);
      const b = this.strings(e.whenFalse, active);
      return a && b ? [...a, ...b] : undefined;
    }
    const sources = this.sources(e, active);
    if (!sources || sources.length === 0) return undefined;
    return this.stringsOfAll(sources, active);
  }

  private stringsOfAll(sources: ts.Expression[], active: Set<ts.Node>): string[] | undefined {
    const out = new Set<string>();
    for (const s of sources) {
      const values = this.strings(s, active);
      if (!values) return undefined;
      for (const v of values) out.add(v);
    }
    return [...out];
  }

  /** Literal types the checker already knows (`as const`, const declarations, literal unions). */
  private literalStrings(expr: ts.Expression): string[] | undefined {
    const type = this.checker.getTypeAtLocation(expr);
    const parts = type.isUnion() ? type.types : [type];
    if (!parts.every((t) => t.isStringLiteral())) return undefined;
    return parts.map((t) => t.value);
  }

  /** Collects object literals inside a request body, following consts, helpers and arguments. */
  private deepObjects(expr: ts.Expression, out: ts.ObjectLiteralExpression[], seen: Set<ts.Node>, depth: number): void {
    if (depth > 12 || seen.has(expr)) return;
    seen.add(expr);
    const e = skipOuter(expr);
    if (ts.isObjectLiteralExpression(e)) {
      out.push(e);
      for (const p of e.properties) {
        if (ts.isPropertyAssignment(p)) this.deepObjects(p.initializer, out, seen, depth + 1);
        else if (ts.isShorthandPropertyAssignment(p)) this.deepObjects(p.name, out, seen, depth + 1);
        else if (ts.isSpreadAssignment(p)) this.deepObjects(p.expression, out, seen, depth + 1);
      }
      return;
    }
    if (ts.isArrayLiteralExpression(e)) {
      for (const el of e.elements) this.deepObjects(ts.isSpreadElement(el) ? el.expression : el, out, seen, depth + 1);
      return;
    }
    if (ts.isConditionalExpression(e)) {
      this.deepObjects(e.whenTrue, out, seen, depth + 1);
      this.deepObjects(e.whenFalse, out, seen, depth + 1);
      return;
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) {
      this.deepObjects(e.right, out, seen, depth + 1);
      return;
    }
    for (const s of this.sources(e, new Set()) ?? []) this.deepObjects(s, out, seen, depth + 1);
  }
}

function skipOuter(expr: ts.Expression): ts.Expression {
  let e = expr;
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
  return e;
}

function propertyNameText(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return undefined;
}

function concatDefined<T>(lists: (T[] | undefined)[]): T[] | undefined {
  if (lists.some((l) => l === undefined)) return undefined;
  return lists.flat() as T[];
}

/** The expressions a function may return (not those of nested functions). */
function returnedExpressions(fn: FunctionLike): ts.Expression[] {
  if (!fn.body) return [];
  if (!ts.isBlock(fn.body)) return [fn.body];
  const out: ts.Expression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression) out.push(node.expression);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(fn.body, visit);
  return out;
}
