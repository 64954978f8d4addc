#!/usr/bin/env node
// validate — check JSON against one of the project's JSON Schemas (2020-12).
//
//   node tests/validate.mjs SCHEMA_FILE JSON_FILE|-
//   node tests/validate.mjs --jsonl SCHEMA_FILE JSONL_FILE|-
//
// Every schema in schemas/ (beside SCHEMA_FILE) is loaded first, so $refs
// between files resolve through their $ids.  With --jsonl each non-blank
// line is one instance (errors name the line).  Exit 0 when everything is
// valid, 1 with the errors on stderr otherwise, 2 on usage or I/O errors.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

function usage(msg) {
	if (msg) console.error(`validate: ${msg}`);
	console.error('usage: node tests/validate.mjs [--jsonl] SCHEMA_FILE JSON_FILE|-');
	process.exit(2);
}

const args = process.argv.slice(2);
const jsonl = args[0] === '--jsonl';
if (jsonl) args.shift();
if (args.length !== 2) usage();
const [schemaFile, dataFile] = args;

let ajv;
let validate;
try {
	ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
	addFormats(ajv);
	const dir = dirname(resolve(schemaFile));
	for (const name of readdirSync(dir).sort()) {
		if (!name.endsWith('.json')) continue;
		const doc = JSON.parse(readFileSync(join(dir, name), 'utf8'));
		if (typeof doc.$id !== 'string') continue;	// vectors, not a schema
		ajv.addSchema(doc);
	}
	const main = JSON.parse(readFileSync(schemaFile, 'utf8'));
	if (typeof main.$id !== 'string') usage(`${schemaFile} has no $id`);
	validate = ajv.getSchema(main.$id);
	if (!validate) usage(`cannot compile ${schemaFile}`);
} catch (e) {
	usage(`${schemaFile}: ${e.message}`);
}

let text;
try {
	text = readFileSync(dataFile === '-' ? 0 : dataFile, 'utf8');
} catch (e) {
	usage(`${dataFile}: ${e.message}`);
}

const label = dataFile === '-' ? '<stdin>' : dataFile;
let bad = 0;

function check(where, source) {
	let doc;
	try {
		doc = JSON.parse(source);
	} catch (e) {
		console.error(`${where}: not JSON: ${e.message}`);
		bad++;
		return;
	}
	if (validate(doc)) return;
	bad++;
	console.error(`${where}: invalid against ${schemaFile}`);
	for (const err of validate.errors.slice(0, 20)) {
		const extra = Object.keys(err.params || {}).length
			? ' ' + JSON.stringify(err.params) : '';
		console.error(`  ${err.instancePath || '/'} ${err.message}${extra}` +
		    ` (${err.schemaPath})`);
	}
	if (validate.errors.length > 20)
		console.error(`  … ${validate.errors.length - 20} more`);
}

if (jsonl) {
	const lines = text.split('\n');
	lines.forEach((line, i) => {
		const body = line.replace(/^\uFEFF/, '');
		if (body.trim() !== '') check(`${label}:${i + 1}`, body);
	});
} else {
	check(label, text);
}
process.exit(bad ? 1 : 0);
