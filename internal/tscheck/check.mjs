// The TypeScript compiler of this folder as one long-lived checker for
// the Go tests (tscheck.Run), so that each check costs a program and not
// a start of tsc. One JSON request per line on stdin:
//
//	{"declarations": "...", "main": "..."}
//
// is type-checked as `tsc --strict --noEmit --target es2022 --lib es2022
// declarations.d.ts main.ts` checks the two files, and answered with one
// JSON line on stdout:
//
//	{"ok": true|false, "output": "main.ts(3,5): error TS2551: ..."}
//
// the output being what tsc --pretty false prints. The library files are
// parsed once and kept. It ends when stdin closes.
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const ts = createRequire(import.meta.url)("typescript");

const options = {
	strict: true,
	noEmit: true,
	target: ts.ScriptTarget.ES2022,
	lib: ["lib.es2022.d.ts"],
};
const dir = "/check";
const host = ts.createCompilerHost(options);
const disk = { getSourceFile: host.getSourceFile, fileExists: host.fileExists, readFile: host.readFile };
const libraries = new Map();
let files = new Map();

host.getCurrentDirectory = () => dir;
host.fileExists = (name) => files.has(name) || disk.fileExists(name);
host.readFile = (name) => (files.has(name) ? files.get(name) : disk.readFile(name));
host.getSourceFile = (name, language, onError, create) => {
	if (files.has(name)) {
		return ts.createSourceFile(name, files.get(name), language, true);
	}
	let file = libraries.get(name);
	if (!file) {
		file = disk.getSourceFile(name, language, onError, create);
		if (file) libraries.set(name, file);
	}
	return file;
};

const format = {
	getCurrentDirectory: () => dir,
	getCanonicalFileName: (name) => name,
	getNewLine: () => "\n",
};

function check({ declarations, main }) {
	files = new Map([
		[`${dir}/declarations.d.ts`, declarations],
		[`${dir}/main.ts`, main],
	]);
	const program = ts.createProgram([...files.keys()], options, host);
	const diagnostics = ts.getPreEmitDiagnostics(program);
	return { ok: diagnostics.length === 0, output: ts.formatDiagnostics(diagnostics, format).trim() };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
	let answer;
	try {
		answer = check(JSON.parse(line));
	} catch (e) {
		answer = { ok: false, output: `check.mjs: ${e && e.stack ? e.stack : e}` };
	}
	process.stdout.write(JSON.stringify(answer) + "\n");
}
