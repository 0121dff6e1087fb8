// Sums up one run of the conformance suite's server scenarios against one
// endpoint, from the checks.json files the suite wrote (-o <dir>) and the
// endpoint's expected-failures file. A check fails when it is a FAILURE or a
// WARNING, as the suite's own baseline check counts it.
//
//	node conformance-report.mjs <label> <results-dir> <expected-failures.yml> [<required.txt>]
//
// An entry of the expected-failures file is a scenario (all of it may fail)
// or <scenario>:<check-id> (that one check may fail, every other check of
// the scenario must pass), as the suite reads the file. With required.txt
// (one scenario name a line: the scenarios a requirement set scores), the
// scenarios it does not name are counted apart as not scored; they are held
// to the same file all the same, so a listed one that passes is stale too.
//
// It prints one line per scenario and a count line, and exits 1 on an
// unexpected failure, a listed scenario or check that passed, or an entry
// without a reason comment.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [label, dir, expectedFile, requiredFile] = process.argv.slice(2);
if (!label || !dir || !expectedFile) {
  console.error("usage: node conformance-report.mjs <label> <results-dir> <expected-failures.yml> [<required.txt>]");
  process.exit(2);
}

// expected reads the suite's format (server: a list of entries) with the
// reason: the comment line right above each entry.
function expected(file) {
  const reasons = new Map();
  let comment = "";
  let inServer = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\S/.test(line) && !line.startsWith("#")) {
      inServer = line.startsWith("server:");
      comment = "";
      continue;
    }
    const c = /^\s+#\s*(.*)$/.exec(line);
    if (c) {
      comment = c[1];
      continue;
    }
    const entry = /^\s+-\s+([\w./:$-]+)\s*$/.exec(line);
    if (entry && inServer) {
      reasons.set(entry[1], comment);
    }
    comment = "";
  }
  return reasons;
}

const reasons = expected(expectedFile);
const required = requiredFile
  ? new Set(readFileSync(requiredFile, "utf8").split("\n").map((l) => l.trim()).filter(Boolean))
  : undefined;

const scenarios = new Map(); // name -> the checks that failed
for (const sub of readdirSync(dir)) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(sub);
  if (!m) continue;
  const checks = JSON.parse(readFileSync(join(dir, sub, "checks.json"), "utf8"));
  scenarios.set(m[1], checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING"));
}

const describe = (bad) => bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? JSON.stringify(c.details ?? {})}`).join("; ");
const problems = [];
const lines = [];
const counts = { required: { passed: 0, failed: 0, expected: 0, all: 0 }, other: { passed: 0, failed: 0, expected: 0, all: 0 } };
const used = new Set();

for (const [name, bad] of [...scenarios].sort(([a], [b]) => a.localeCompare(b))) {
  const n = !required || required.has(name) ? counts.required : counts.other;
  const tag = !required || required.has(name) ? "" : " (not scored)";
  n.all++;
  if (reasons.has(name)) {
    used.add(name);
    if (bad.length > 0) {
      n.expected++;
      lines.push(`  expected  ${name}${tag}: ${reasons.get(name)}`);
    } else {
      n.failed++;
      problems.push(`listed in ${expectedFile} but passed: ${name}`);
      lines.push(`  STALE     ${name}${tag}: passed, but is listed as expected to fail`);
    }
    continue;
  }
  const listedChecks = [...reasons.keys()].filter((k) => k.startsWith(`${name}:`));
  listedChecks.forEach((k) => used.add(k));
  const unlisted = bad.filter((c) => !reasons.has(`${name}:${c.id}`));
  const stale = listedChecks.filter((k) => !bad.some((c) => `${name}:${c.id}` === k));
  if (unlisted.length > 0) {
    n.failed++;
    problems.push(`unexpected failure: ${name}: ${describe(unlisted)}`);
    lines.push(`  FAIL      ${name}${tag}: ${describe(unlisted)}`);
  } else if (stale.length > 0) {
    n.failed++;
    for (const k of stale) problems.push(`listed in ${expectedFile} but passed: ${k}`);
    lines.push(`  STALE     ${name}${tag}: ${stale.join(", ")} passed, but listed as expected to fail`);
  } else if (bad.length > 0) {
    n.expected++;
    lines.push(`  expected  ${name}${tag}: ${bad.map((c) => `${c.id}: ${reasons.get(`${name}:${c.id}`)}`).join("; ")}`);
  } else {
    n.passed++;
    lines.push(`  pass      ${name}${tag}`);
  }
}
for (const [entry, reason] of reasons) {
  if (!used.has(entry)) problems.push(`listed in ${expectedFile} but not run: ${entry}`);
  if (!reason) problems.push(`listed in ${expectedFile} without a reason comment: ${entry}`);
}
if (scenarios.size === 0) problems.push(`no scenario results in ${dir}`);
if (required) {
  for (const name of required) if (!scenarios.has(name)) problems.push(`required scenario not run: ${name}`);
}

console.log(lines.join("\n"));
for (const p of problems) console.log(`  problem: ${p}`);
const sum = (c) => `${c.passed} passed, ${c.failed} failed, ${c.expected} expected to fail`;
if (required) {
  console.log(`conformance, ${label}: ${sum(counts.required)} (of ${counts.required.all} required); not scored: ${sum(counts.other)} (of ${counts.other.all})`);
} else {
  console.log(`conformance, ${label}: ${sum(counts.required)} (${counts.required.all} scenarios)`);
}
process.exit(problems.length > 0 ? 1 : 0);
