// What the client check scripts share: named checks that count instead of
// stopping at the first failure, the final count line and exit status, and
// assertions on tool results.

import assert from "node:assert/strict";

const tally = { passed: 0, failed: 0 };

// check runs one named check; a thrown error is its failure.
export async function check(name, fn) {
  try {
    await fn();
    tally.passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    fail(name, err, false);
  }
}

// fail counts a failure outside a check, such as a connection that broke a
// whole section; stack says whether to print the error's stack.
export function fail(name, err, stack = true) {
  tally.failed++;
  const detail = err instanceof Error ? (stack ? err.stack : err.message) : String(err);
  console.log(`FAIL ${name}: ${detail}`);
}

// finish prints the count line (run.sh shows its tail in the report) and
// exits 1 if any check failed.
export function finish(label) {
  console.log(`${label}: ${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed > 0 ? 1 : 0);
}

// text joins a tool result's text content.
export function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

export function assertError(result, ...parts) {
  assert.equal(result.isError, true, `want isError, got ${JSON.stringify(result)}`);
  for (const p of parts) {
    assert.ok(text(result).includes(p), `error text ${JSON.stringify(text(result))} lacks ${JSON.stringify(p)}`);
  }
}

export function assertOK(result) {
  assert.ok(!result.isError, `unexpected isError: ${text(result)}`);
}

// rejectsWith checks that a request fails with a JSON-RPC error of code,
// thrown as the SDK's error class errorClass.
export async function rejectsWith(promise, errorClass, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof errorClass, `want a ${errorClass.name}, got ${err}`);
    assert.equal(err.code, code, `JSON-RPC error code ${err.code} (${err.message}), want ${code}`);
    return true;
  });
}
