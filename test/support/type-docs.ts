/**
 * Finds optional fields of the library's exported types whose doc comment gives no `@default`: the
 * types a cdk8s user reads in `lib/types`, and the TidbCluster fields they write.
 */
import * as path from 'node:path';
import ts from 'typescript';

export interface TypeDocReport {
  /** Optional fields seen in exported interfaces, classes and type literals. */
  readonly optional: number;
  /** `file:line: Type.field` of every optional field without a non-empty `@default` tag. */
  readonly missing: string[];
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  resolveJsonModule: true,
  esModuleInterop: true,
  types: ['node'],
  noEmit: true,
};

/** Every source file under `srcDir` that `entry` imports, directly or not, is checked. */
export function undocumentedDefaults(entry: string, srcDir: string): TypeDocReport {
  const program = ts.createProgram([entry], COMPILER_OPTIONS);
  program.getTypeChecker(); // binds the files, which JSDoc lookup needs
  const missing: string[] = [];
  let optional = 0;
  const root = path.resolve(srcDir) + path.sep;
  for (const sf of program.getSourceFiles()) {
    if (!path.resolve(sf.fileName).startsWith(root)) continue;
    const where = (n: ts.Node) =>
      `${path.relative(path.dirname(root), sf.fileName)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;

    const checkMembers = (members: ts.NodeArray<ts.TypeElement | ts.ClassElement>, owner: string): void => {
      for (const m of members) {
        if (!ts.isPropertySignature(m) && !ts.isPropertyDeclaration(m)) continue;
        if (ts.getCombinedModifierFlags(m) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        const name = `${owner}.${m.name.getText(sf)}`;
        if (m.questionToken) {
          optional++;
          const documented = ts.getJSDocTags(m).some((t) => t.tagName.text === 'default' && ts.getTextOfJSDocComment(t.comment)?.trim());
          if (!documented) missing.push(`${where(m)}: ${name}`);
        }
        if (m.type) inType(m.type, name);
      }
    };
    // Type literals nested in a field's type (arrays, unions, intersections), not a function's parameters.
    const inType = (n: ts.Node, owner: string): void => {
      if (ts.isFunctionTypeNode(n) || ts.isConstructorTypeNode(n)) return;
      if (ts.isTypeLiteralNode(n)) return checkMembers(n.members, owner);
      ts.forEachChild(n, (c) => inType(c, owner));
    };

    for (const st of sf.statements) {
      if (!(ts.getCombinedModifierFlags(st as unknown as ts.Declaration) & ts.ModifierFlags.Export)) continue;
      if ((ts.isInterfaceDeclaration(st) || ts.isClassDeclaration(st)) && st.name) checkMembers(st.members, st.name.text);
      else if (ts.isTypeAliasDeclaration(st)) inType(st.type, st.name.text);
    }
  }
  return { optional, missing };
}
