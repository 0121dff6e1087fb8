/**
 * Notes *\/ with a comment end
 * and a second line.
 */
declare const docs: {
  /**
   * Ends a comment early: *\/ globalThis.pwned = true; /* and goes on.
   * @param input.pattern A glob like src/**\/*.go (default: "**\/*")
   * @param input.note Line one. Line two with *\/ inside. After blank lines.
   */
  comment_end(input: {
    /**
     * A glob like src/**\/*.go
     * @default "**\/*"
     */
    pattern: string;
    /**
     * Line one.
     * Line two with *\/ inside.
     *
     * After blank lines.
     */
    note?: string;
  }): Promise<unknown>;
  /**
   * First line, indented input.
   *
   * Second paragraph after CRLF.
   *   - a list item
   *   - another item
   *
   * Last line.
   * After a line separator.
   * @param input.mode How to run. Fast is the default. (default: "fast")
   * @param input.since (format: date-time)
   * @param input.limit (minimum: 1, maximum: 100) (default: 20)
   * @param input.legacy Old switch (deprecated)
   */
  multiline(input?: {
    /**
     * How to run.
     * Fast is the default.
     * @default "fast"
     */
    mode?: "fast" | "slow";
    /** (format: date-time) */
    since?: string;
    /**
     * (minimum: 1, maximum: 100)
     * @default 20
     */
    limit?: number;
    /**
     * Old switch
     * @deprecated
     */
    legacy?: boolean;
  }): Promise<unknown>;
  /** Bell  NUL  tab here, escape [31m red, bidi  evil  end. */
  control_chars(input?: {}): Promise<unknown>;
  /**
   * Summarizes a document. Sentence 1 says a little more about what this tool does and why. Sentence 2 says a little more about what this tool does and why. Sentence 3 says a little more about what this tool does and why. Sentence 4 says a little more about what this tool does and why. Sentence 5 says a little more about what this tool does and why. Sentence 6 says a little more about what this tool does and why. Sentence 7 says a little more about what this tool does and why. Sentence 8 says a little more about what this tool does and why. Sentence 9 says a little more about what this tool does and why. Sentence 10 says a little more about what this tool does and why. Sentence 11 says a little more about what this tool does and why. Sentence 12 says a little more about what this tool does and why. Sentence 13 says a little more about what this tool does and why. Sentence 14 says a little more about what this tool does and why. Sentence 15 says a little more about what this tool does and...
   * @param input.text Summarizes a document. Sentence 1 says a little more about what this tool does and why. Sentence 2 says a little more about what this tool does and why. Sentence 3 says a little more about what this...
   */
  long(input: {
    /** Summarizes a document. Sentence 1 says a little more about what this tool does and why. Sentence 2 says a little more about what this tool does and why. Sentence 3 says a little more about what this tool does and why. Sentence 4 says a little more about what this tool does and why. Sentence 5 says a little more about what this tool does and why. Sentence 6 says a little more about what this tool does and why. Sentence 7 says a little more about what this tool does and why. Sentence 8 says a little more about what this tool does and why. Sentence 9 says a little more about what this tool does and why. Sentence 10 says a little more about what this tool does and why. Sentence 11 says a little more about what this tool does and why. Sentence 12 says a little more about what this tool does and why. Sentence 13 says a little more about what this tool does and why. Sentence 14 says a little more about what this tool does and why. Sentence 15 says a little more about what this tool does and... */
    text: string;
  }): Promise<unknown>;
  no_description(input?: { x?: string }): Promise<unknown>;
  /**
   * A default too long to show in full.
   * @param input.options (default: {"retries":3,"backoff":{"initial":"100ms","max":"10s","factor":2},"hosts":["alpha.example","beta.exa...)
   */
  big_default(input?: {
    /** @default {"retries":3,"backoff":{"initial":"100ms","max":"10s","factor":2},"hosts":["alpha.example","beta.exa... */
    options?: { [key: string]: unknown };
  }): Promise<unknown>;
};
