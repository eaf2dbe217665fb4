// Tool errors are ordinary, catchable errors with a stable code.
const outcomes = [];
for (const city of ['Paris', 'Atlantis']) {
  try {
    const r = await tools.get_weather({ city });
    outcomes.push(`${city}: ${r.temperature_c} C`);
  } catch (e) {
    outcomes.push(`${city}: ${e.code} (${e.message})`);
  }
}
try {
  await tools.get_weather({ town: 'Paris' });
} catch (e) {
  outcomes.push(`validation: ${e.name} ${e.message}`);
}
try {
  await tools.launch_rockets();
} catch (e) {
  outcomes.push(`unknown tool: ${e.name}`);
}
return outcomes;
