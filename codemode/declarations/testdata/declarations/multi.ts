/** Weather service. */
declare const weather: {
  /** Current weather for a city. */
  get_weather(input: { /** City name, e.g. Paris */ city: string; units?: "metric" | "imperial" }): Promise<WeatherGetWeatherOutput>;
};
type WeatherGetWeatherOutput = { temperature: number; conditions: string };

/** unavailable: connection refused */
declare const down: {};

declare const a: {
  b_c(input?: {}): Promise<ABCOutput>;
};
type ABCOutput = { from?: "a.b_c" };

declare const a_b: {
  c(input?: {}): Promise<ABCOutput2>;
};
type ABCOutput2 = { from?: "a_b.c" };
