/**
 * Notes *\/ with a comment end
 * and a second line.
 */
declare const docs: {
  /** Ends a comment early: *\/ globalThis.pwned = true; /* and goes on. */
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
  /** Summarizes a document. Sentence 1 says a little more about what this tool does and why. Sentence 2 says a little more about what this tool does and why. Sentence 3 says a little more about what this tool does and why. Sentence 4 says a little more about what this tool does and why. Sentence 5 says... */
  long(input: {
    /** Summarizes a document. Sentence 1 says a little more about what this tool does and why. Sentence 2 says a little more about what this tool does and why. Sentence 3 says a little more about what this tool does and why. Sentence 4 says a little more... */
    text: string;
  }): Promise<unknown>;
  no_description(input?: { x?: string }): Promise<unknown>;
  /** A default too long to show in full. */
  big_default(input?: {
    /** @default {"retries":3,"backoff":{"initial":"100ms","max":"10s","factor":2},"hosts":["alpha.example","beta.exa... */
    options?: { [key: string]: unknown };
  }): Promise<unknown>;
};
