#!/usr/bin/env node
// standin.js - a stand-in for the providers' APIs, on 127.0.0.1 only, for
// the conformance suite (tests/agents/run.sh, docs/agents.md).  It is a
// tool for driving the real agent CLIs, not a model of them: each
// scenario answers the way the provider's API documents for that case,
// and the CLI under test decides what to print.
//
//   node standin.js PORTFILE CONTROLFILE LOGFILE [LIFETIME_S]
//
// Listens on an ephemeral port of 127.0.0.1 and writes it to PORTFILE.
// Every request reads CONTROLFILE (JSON: {"scenario", "story", "reset",
// "shell", "capacity_s"}) so one server serves a whole suite.  "minute" (codex) keeps
// one piece of state per story: the moment its limit lifts, fixed at the
// first request (limitLift below).  Every request is logged
// to LOGFILE (method, path, scenario), and what the CLI's shell tool
// returned to the model in the "shell" scenario as a "shell result:"
// line.  Exits by itself after LIFETIME_S (default 1800) seconds.
'use strict';
const http = require('http');
const fs = require('fs');

const [portFile, controlFile, logFile, lifetime] = process.argv.slice(2);
if (!portFile || !controlFile || !logFile) {
	process.stderr.write('usage: standin.js PORTFILE CONTROLFILE LOGFILE [LIFETIME_S]\n');
	process.exit(64);
}
const hanging = new Set();

function control() {
	try {
		return JSON.parse(fs.readFileSync(controlFile, 'utf8'));
	} catch (e) {
		return { scenario: 'success' };
	}
}
function log(line) {
	fs.appendFileSync(logFile, new Date().toISOString() + ' ' + line + '\n');
}
// The "shell" scenario: the model asks for ctl.shell through the CLI's
// own shell tool, then checks the boxes as in "success".  What the tool
// gave back is logged (it is what the CLI saw inside its sandbox).
function shellCommand(ctl) {
	return ctl.shell || 'echo inside >ran-inside.txt';
}
function logShellResult(out) {
	const text = typeof out === 'string' ? out : JSON.stringify(out);
	log('shell result: ' + JSON.stringify(String(text).slice(0, 2000)));
}
function json(res, status, body, headers) {
	res.writeHead(status, Object.assign({ 'content-type': 'application/json' }, headers || {}));
	res.end(JSON.stringify(body));
}

// The "minute" scenario: a usage limit whose reset the CLI names to the
// minute ("try again at 9:17 AM") while the API lifts it 40 s into that
// minute, as the real one did (issue 31).  Fixed at the story's first
// request t: the minute M that holds t + 25 s, lifted at M:40, which is
// 5 to 65 s after t; the end of M, where a reader that rounds the minute
// up wakes, is 25 to 85 s after t and 20 s after the lift, and M:00, where
// one that reads the minute as a moment wakes, is still limited.  Works
// at any time of day.
const lifts = new Map();
function limitLift(ctl) {
	const key = ctl.story || '';
	if (!lifts.has(key)) {
		const t = Date.now() / 1000;
		const minute = Math.floor((t + 25) / 60) * 60;
		lifts.set(key, minute + 40);
		log(`minute: first request at ${new Date(t * 1000).toISOString()}, the limit lifts at ${new Date((minute + 40) * 1000).toISOString()}`);
	}
	return lifts.get(key);
}

// ---- Anthropic Messages API (claude) ----
function sse(res, events) {
	res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
	for (const [name, data] of events)
		res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
	res.end();
}
function anthropicMessage(res, model, blocks, stop) {
	const ev = [['message_start', { type: 'message_start', message: {
		id: 'msg_standin', type: 'message', role: 'assistant', model,
		content: [], stop_reason: null, stop_sequence: null,
		usage: { input_tokens: 100, output_tokens: 1 } } }]];
	blocks.forEach((b, i) => {
		if (b.type === 'text') {
			ev.push(['content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } }]);
			ev.push(['content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: b.text } }]);
		} else {
			ev.push(['content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }]);
			ev.push(['content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }]);
		}
		ev.push(['content_block_stop', { type: 'content_block_stop', index: i }]);
	});
	ev.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }]);
	ev.push(['message_stop', { type: 'message_stop' }]);
	sse(res, ev);
}
function anthropicError(res, status, type, message, headers) {
	json(res, status, { type: 'error', error: { type, message } }, headers);
}
function toolResults(body, id) {
	let n = 0;
	for (const m of body.messages || [])
		if (Array.isArray(m.content))
			for (const c of m.content)
				if (c.type === 'tool_result') {
					n++;
					if (c.tool_use_id === id) logShellResult(c.content);
				}
	return n;
}
function anthropic(req, res, body, ctl) {
	const model = body.model || 'claude-standin';
	// the CLI's own side requests (titles, quota probes) get a short answer
	if (body.max_tokens !== undefined && body.max_tokens <= 1 && (ctl.scenario === 'success' || ctl.scenario === 'shell'))
		return anthropicMessage(res, model, [{ type: 'text', text: 'ok' }], 'end_turn');
	switch (ctl.scenario) {
	case 'success': {
		const done = toolResults(body);
		if (done === 0)
			return anthropicMessage(res, model, [{ type: 'tool_use', id: 'toolu_read1', name: 'Read', input: { file_path: ctl.story } }], 'tool_use');
		if (done === 1)
			return anthropicMessage(res, model, [{ type: 'tool_use', id: 'toolu_edit1', name: 'Edit', input: { file_path: ctl.story, old_string: '- [ ]', new_string: '- [x]', replace_all: true } }], 'tool_use');
		return anthropicMessage(res, model, [{ type: 'text', text: 'All tasks of the story are done and checked.' }], 'end_turn');
	}
	case 'shell': {
		// the Bash tool, then Read and Edit as in "success"
		const done = toolResults(body, 'toolu_bash1');
		if (done === 0)
			return anthropicMessage(res, model, [{ type: 'tool_use', id: 'toolu_bash1', name: 'Bash', input: { command: shellCommand(ctl), description: 'Run the story\'s shell step' } }], 'tool_use');
		if (done === 1)
			return anthropicMessage(res, model, [{ type: 'tool_use', id: 'toolu_read1', name: 'Read', input: { file_path: ctl.story } }], 'tool_use');
		if (done === 2)
			return anthropicMessage(res, model, [{ type: 'tool_use', id: 'toolu_edit1', name: 'Edit', input: { file_path: ctl.story, old_string: '- [ ]', new_string: '- [x]', replace_all: true } }], 'tool_use');
		return anthropicMessage(res, model, [{ type: 'text', text: 'Ran the shell step; all tasks of the story are done and checked.' }], 'end_turn');
	}
	case 'plain':
		return anthropicMessage(res, model, [{ type: 'text', text: 'I read the story; I have not changed any file.' }], 'end_turn');
	case 'ratelimit':
		return anthropicError(res, 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.', { 'retry-after': '7' });
	case 'overloaded':
		return anthropicError(res, 529, 'overloaded_error', 'Overloaded');
	case 'server':
		return anthropicError(res, 500, 'api_error', 'Internal server error');
	case 'auth':
		return anthropicError(res, 401, 'authentication_error', 'invalid x-api-key');
	case 'model':
		return anthropicError(res, 404, 'not_found_error', `model: ${model}`);
	case 'limit':
		return anthropicError(res, 429, 'rate_limit_error', 'Rate limited', {
			'anthropic-ratelimit-unified-status': 'rejected',
			'anthropic-ratelimit-unified-reset': String(ctl.reset),
			'anthropic-ratelimit-unified-representative-claim': 'five_hour',
		});
	case 'noreset':
		return anthropicError(res, 400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.');
	case 'refusal':
		// the model declines: a stream that ends with stop_reason
		// "refusal" (the Messages API's streaming classifier)
		return anthropicMessage(res, model, [{ type: 'text', text: 'I can\'t help with that.' }], 'refusal');
	case 'context':
		return anthropicError(res, 400, 'invalid_request_error', 'prompt is too long: 215343 tokens > 200000 maximum');
	case 'badrequest':
		return anthropicError(res, 400, 'invalid_request_error', 'messages.1.content.0.tool_use.input: Input should be a valid dictionary');
	}
	return anthropicError(res, 500, 'api_error', `unknown scenario ${ctl.scenario}`);
}

// ---- OpenAI Responses API (codex) ----
function openaiSSE(res, items) {
	const resp = { id: 'resp_standin', object: 'response', created_at: Math.floor(Date.now() / 1000),
		status: 'in_progress', model: 'standin', output: [] };
	const ev = [['response.created', { type: 'response.created', response: resp }]];
	items.forEach((item, i) => {
		ev.push(['response.output_item.added', { type: 'response.output_item.added', output_index: i, item }]);
		ev.push(['response.output_item.done', { type: 'response.output_item.done', output_index: i, item }]);
	});
	ev.push(['response.completed', { type: 'response.completed', response: Object.assign({}, resp, {
		status: 'completed', output: items,
		usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 },
			output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 } }) }]);
	sse(res, ev);
}
function openaiText(text) {
	return { type: 'message', id: 'msg_standin', role: 'assistant', status: 'completed',
		content: [{ type: 'output_text', text, annotations: [] }] };
}
function openaiError(res, status, type, message, extra, headers) {
	json(res, status, { error: Object.assign({ message, type, param: null, code: type }, extra || {}) }, headers);
}
function openaiSuccess(res, outputs, ctl) {
	if (outputs === 0)
		return openaiSSE(res, [{ type: 'function_call', id: 'fc_standin', call_id: 'call_standin1', name: 'exec_command',
			arguments: JSON.stringify({ cmd: "sed -i 's/^- \\[ \\]/- [x]/' " + ctl.story }) }]);
	return openaiSSE(res, [openaiText('All tasks of the story are done and checked.')]);
}
function openai(req, res, body, ctl) {
	const outputs = (body.input || []).filter((i) => i.type === 'function_call_output').length;
	for (const i of body.input || [])
		if (i.type === 'function_call_output' && i.call_id === 'call_shell1') logShellResult(i.output);
	switch (ctl.scenario) {
	case 'success':
		return openaiSuccess(res, outputs, ctl);
	case 'shell':
		// its exec_command tool twice: the shell step, then the edit of
		// "success"
		if (outputs === 0)
			return openaiSSE(res, [{ type: 'function_call', id: 'fc_shell', call_id: 'call_shell1', name: 'exec_command',
				arguments: JSON.stringify({ cmd: shellCommand(ctl) }) }]);
		if (outputs === 1)
			return openaiSSE(res, [{ type: 'function_call', id: 'fc_standin', call_id: 'call_standin1', name: 'exec_command',
				arguments: JSON.stringify({ cmd: "sed -i 's/^- \\[ \\]/- [x]/' " + ctl.story }) }]);
		return openaiSSE(res, [openaiText('Ran the shell step; all tasks of the story are done and checked.')]);
	case 'plain':
		return openaiSSE(res, [openaiText('I read the story; I have not changed any file.')]);
	case 'ratelimit':
		return openaiError(res, 429, 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again in 7s.', {}, { 'retry-after': '7' });
	case 'overloaded':
		return openaiError(res, 503, 'server_error', 'The server is overloaded or not ready yet.');
	case 'server':
		return openaiError(res, 500, 'server_error', 'The server had an error while processing your request. Sorry about that!');
	case 'auth':
		return openaiError(res, 401, 'invalid_api_key', 'Incorrect API key provided: sk-stand***. You can find your API key at https://platform.openai.com/account/api-keys.');
	case 'model':
		return openaiError(res, 404, 'model_not_found', `The model \`${body.model}\` does not exist or you do not have access to it.`);
	case 'limit': {
		const now = Math.floor(Date.now() / 1000);
		return openaiError(res, 429, 'usage_limit_reached', 'The usage limit has been reached',
			{ plan_type: 'plus', resets_at: ctl.reset, resets_in_seconds: ctl.reset - now });
	}
	case 'noreset':
		return openaiError(res, 429, 'insufficient_quota', 'You exceeded your current quota, please check your plan and billing details.');
	case 'minute': {
		// limited until the lift (codex names its minute), then the
		// edits of "success"
		const lift = limitLift(ctl);
		const now = Date.now() / 1000;
		if (now < lift)
			return openaiError(res, 429, 'usage_limit_reached', 'The usage limit has been reached',
				{ plan_type: 'plus', resets_at: Math.floor(lift), resets_in_seconds: Math.ceil(lift - now) });
		return openaiSuccess(res, outputs, ctl);
	}
	case 'later':
		// the same wall with no reset in it: codex says "try again later"
		return openaiError(res, 429, 'usage_limit_reached', 'The usage limit has been reached', { plan_type: 'plus' });
	case 'refusal':
		// the request refused by the safety system (code
		// invalid_prompt).  A refusal content part in a completed
		// response is no use here: codex 0.169.0 prints nothing of it
		// and exits 0 (turn.completed), a plain "incomplete"
		return openaiError(res, 400, 'invalid_request_error', "Invalid prompt: we've limited access to this content for safety reasons. This type of information may be used to benefit or to harm people. We are continuously refining our work in this area, and you can read more about our approach in our blog post (https://openai.com/index/preparing-for-future-ai-capabilities-in-biology) and Model Spec (https://openai.com/index/introducing-the-model-spec).",
			{ code: 'invalid_prompt' });
	case 'context':
		return openaiError(res, 400, 'invalid_request_error', 'Your input exceeds the context window of this model. Please adjust your input and try again.',
			{ param: 'input', code: 'context_length_exceeded' });
	case 'badrequest':
		return openaiError(res, 400, 'invalid_request_error', "Invalid type for 'input[2].content': expected one of an array of objects or string, but got an object instead.",
			{ param: 'input[2].content', code: 'invalid_type' });
	}
	return openaiError(res, 500, 'server_error', `unknown scenario ${ctl.scenario}`);
}

// ---- Gemini API (gemini-cli) ----
function geminiChunk(parts, finish) {
	return { candidates: [{ content: { role: 'model', parts }, finishReason: finish, index: 0 }],
		usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
		modelVersion: 'gemini-standin' };
}
function geminiError(res, code, status, message, details, headers) {
	json(res, code, { error: { code, message, status, details: details || [] } }, headers);
}
function gemini(req, res, body, ctl, path) {
	const stream = path.endsWith(':streamGenerateContent');
	const schema = body.generationConfig && body.generationConfig.responseJsonSchema;
	if (!stream && ctl.scenario !== 'hang' && ctl.scenario !== 'timeout') {
		// the CLI's own side calls (its model router): a plain answer
		const text = schema && schema.properties && schema.properties.complexity_score
			? JSON.stringify({ complexity_reasoning: 'a simple edit', complexity_score: 10 }) : 'ok';
		return json(res, 200, geminiChunk([{ text }], 'STOP'));
	}
	let answered = 0;
	for (const c of body.contents || [])
		for (const p of c.parts || [])
			if (p.functionResponse) {
				answered++;
				if (p.functionResponse.name === 'run_shell_command')
					logShellResult(p.functionResponse.response);
			}
	const quota = (metric, delay) => {
		const d = [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{
			quotaMetric: `generativelanguage.googleapis.com/${metric}`,
			quotaId: metric === 'generate_requests_per_model_per_day' ? 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' : 'GenerateRequestsPerMinutePerProjectPerModel',
			quotaValue: '100' }] }];
		if (delay) d.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: delay });
		return d;
	};
	switch (ctl.scenario) {
	case 'success': {
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		const chunk = answered === 0
			? geminiChunk([{ functionCall: { name: 'replace', args: { file_path: ctl.story, instruction: 'Check every task box of the story.', old_string: '- [ ]', new_string: '- [x]', allow_multiple: true } } }], 'STOP')
			: geminiChunk([{ text: 'All tasks of the story are done and checked.' }], 'STOP');
		res.end(`data: ${JSON.stringify(chunk)}\n\n`);
		return;
	}
	case 'shell': {
		// run_shell_command, then replace as in "success"
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		const chunk = answered === 0
			? geminiChunk([{ functionCall: { name: 'run_shell_command', args: { command: shellCommand(ctl), description: 'Run the story\'s shell step.' } } }], 'STOP')
			: answered === 1
				? geminiChunk([{ functionCall: { name: 'replace', args: { file_path: ctl.story, instruction: 'Check every task box of the story.', old_string: '- [ ]', new_string: '- [x]', allow_multiple: true } } }], 'STOP')
				: geminiChunk([{ text: 'Ran the shell step; all tasks of the story are done and checked.' }], 'STOP');
		res.end(`data: ${JSON.stringify(chunk)}\n\n`);
		return;
	}
	case 'plain':
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		res.end(`data: ${JSON.stringify(geminiChunk([{ text: 'I read the story; I have not changed any file.' }], 'STOP'))}\n\n`);
		return;
	case 'ratelimit':
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).',
			quota('generate_requests_per_model', '7s'), { 'retry-after': '7' });
	case 'overloaded':
		return geminiError(res, 503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
	case 'server':
		return geminiError(res, 500, 'INTERNAL', 'Internal error encountered.');
	case 'auth':
		return geminiError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
	case 'model':
		return geminiError(res, 404, 'NOT_FOUND', `models/${path.split('/').pop().split(':')[0]} is not found for API version v1beta, or is not supported for generateContent.`);
	case 'limit': {
		// an hourly window with the reset in RetryInfo: gemini-cli
		// gives up at once (over 5 minutes) and names the delay
		const now = Math.floor(Date.now() / 1000);
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Generate Content API requests per hour' and limit 'GenerateContent request limit per hour' of service 'generativelanguage.googleapis.com'.",
			[{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{
				quotaMetric: 'generativelanguage.googleapis.com/generate_content_requests',
				quotaId: 'GenerateRequestsPerHourPerProjectPerModel' }] },
			 { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${ctl.reset - now}s` }]);
	}
	case 'daily':
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_requests_per_model_per_day, limit: 100',
			quota('generate_requests_per_model_per_day', null));
	case 'noreset':
		// prepaid credits used up: no reset, a person must add more
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing.',
			[{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INSUFFICIENT_G1_CREDITS_BALANCE', domain: 'generativelanguage.googleapis.com' }]);
	case 'capacity': {
		// the model's capacity used up, its reset in the message and in
		// RetryInfo: gemini-cli retries silently (a capacity error is
		// retried after RetryInfo's delay), announcing "Attempt 1
		// failed: <message>. Retrying after <delay + up to 20 %>ms..."
		// and sleeping that long
		const r = Number(ctl.capacity_s) || 6247;
		const hms = `${Math.floor(r / 3600)}h${Math.floor(r % 3600 / 60)}m${r % 60}s`;
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', `You have exhausted your capacity on this model. Your quota will reset after ${hms}.`,
			[{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'MODEL_CAPACITY_EXHAUSTED', domain: 'cloudcode-pa.googleapis.com',
				metadata: { model: path.split('/').pop().split(':')[0] } },
			 { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${r}s` }]);
	}
	case 'longretry':
		// a per-minute quota with a retry delay of 60 s: gemini-cli
		// announces "… Suggested retry after 60s.. Retrying after
		// <60 s + up to 20 %>ms..." and sleeps that long before its
		// second try
		return geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).',
			quota('generate_requests_per_model', '60s'));
	case 'refusal': {
		// the response blocked by the safety filters: no text, finish
		// reason SAFETY
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		const chunk = { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0,
			safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }] }],
			usageMetadata: { promptTokenCount: 100, totalTokenCount: 100 }, modelVersion: 'gemini-standin' };
		res.end(`data: ${JSON.stringify(chunk)}\n\n`);
		return;
	}
	case 'context':
		return geminiError(res, 400, 'INVALID_ARGUMENT', 'The input token count (1245183) exceeds the maximum number of tokens allowed (1048576).');
	case 'badrequest':
		return geminiError(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.');
	}
	return geminiError(res, 500, 'INTERNAL', `unknown scenario ${ctl.scenario}`);
}

const server = http.createServer((req, res) => {
	const ctl = control();
	let raw = '';
	req.setEncoding('utf8');
	req.on('data', (c) => { raw += c; });
	req.on('end', () => {
		log(`${req.method} ${req.url} scenario=${ctl.scenario}`);
		if (process.env.STANDIN_DUMP)
			fs.appendFileSync(logFile + '.bodies', raw + '\n');
		// "timeout": the same silence, ended at timeout_s, not the stall
		if (ctl.scenario === 'hang' || ctl.scenario === 'timeout') {
			hanging.add(res);
			return; // accept, then say nothing
		}
		let body = {};
		try { body = raw ? JSON.parse(raw) : {}; } catch (e) { body = {}; }
		const path = req.url.split('?')[0];
		if (req.method === 'POST' && path.endsWith('/v1/messages'))
			return anthropic(req, res, body, ctl);
		if (req.method === 'POST' && path.endsWith('/v1/responses'))
			return openai(req, res, body, ctl);
		if (req.method === 'POST' && /\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path))
			return gemini(req, res, body, ctl, path);
		json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } });
	});
});
server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(portFile, String(server.address().port));
	log(`listening on 127.0.0.1:${server.address().port}`);
});
setTimeout(() => process.exit(0), (Number(lifetime) || 1800) * 1000).unref();
process.on('SIGTERM', () => process.exit(0));
