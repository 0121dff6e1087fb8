declare const odd_names: {
  /**
   * Dash.
   * Calls the backend tool "get-weather".
   */
  get_weather(input?: { city?: string }): Promise<OddNamesGetWeatherOutput>;
  /**
   * Dot: collides with get-weather after sanitizing.
   * Calls the backend tool "get.weather".
   */
  get_weather_2(input?: { [key: string]: unknown }): Promise<unknown>;
  /**
   * Underscore: collides too.
   * Calls the backend tool "get_weather".
   */
  get_weather_3(input?: { [key: string]: unknown }): Promise<unknown>;
  /** Its output type name would collide with get-weather's. */
  getWeather(input?: { [key: string]: unknown }): Promise<OddNamesGetWeatherOutput2>;
  /**
   * Leading digit.
   * Calls the backend tool "2fa-verify".
   */
  _2fa_verify(input: { code: string }): Promise<unknown>;
  /**
   * Reserved word.
   * Calls the backend tool "delete".
   */
  delete_(input: { id: string }): Promise<unknown>;
  /**
   * Reserved word.
   * Calls the backend tool "class".
   */
  class_(input?: {}): Promise<unknown>;
  /**
   * Non-ASCII letters.
   * Calls the backend tool "ünïcode-tool".
   */
  _n_code_tool(input?: {}): Promise<unknown>;
  /**
   * Only non-ASCII letters.
   * Calls the backend tool "天気".
   */
  __(input?: {}): Promise<unknown>;
  /**
   * Would replace the prototype of the backend object.
   * Calls the backend tool "__proto__".
   */
  __proto___(input?: {}): Promise<unknown>;
  /** Dollar sign is fine. */
  $ref(input?: {}): Promise<unknown>;
  /** Fine as a method name. */
  constructor(input?: {}): Promise<unknown>;
  /**
   * Empty name.
   * Calls the backend tool "".
   */
  _(input?: {}): Promise<unknown>;
  /** Property names that are not identifiers are quoted. */
  odd_properties(input: {
    /** A header name */
    "content-type": string;
    "x.y"?: number;
    "0day"?: boolean;
    "délai"?: number;
    "with space"?: string;
    /** Reserved words are fine as property names */
    default?: string;
    class?: string;
    __proto__?: string;
    "quote\"d"?: string;
    /** A property named like a comment end */
    "*/": string;
    /** The empty name */
    ""?: string;
    $ref?: string;
    valid_name: string;
  }): Promise<unknown>;
};
type OddNamesGetWeatherOutput = { t?: number };
type OddNamesGetWeatherOutput2 = { t?: string };
