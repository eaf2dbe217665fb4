// Three tool calls in Promise.all: each takes 200 ms on the host, together about 200 ms.
const cities: string[] = ['Paris', 'Tokyo', 'Lima'];
const started = performance.now();
const reports = await Promise.all(cities.map((city) => tools.get_weather({ city })));
console.log(`fetched ${reports.length} forecasts in parallel`);
const warmest = reports.reduce((a, b) => (b.temperature_c > a.temperature_c ? b : a));
const { fahrenheit } = await tools.convert_temperature({ celsius: warmest.temperature_c });
return { warmest: warmest.city, fahrenheit, elapsed_ms: Math.round(performance.now() - started) };
