package show

// pageHTML is the page template: static HTML and CSS, no script.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
h2 { font-size: 1.1em; margin: 1.5em 0 .5em; border-bottom: 1px solid #ccc; }
.q { display: flex; align-items: flex-start; gap: .6em; margin: .6em 0; padding: .4em; border-bottom: 1px solid #eee; }
.card { width: 90px; text-align: center; font-size: 11px; border: 3px solid transparent; padding: 2px; overflow-wrap: anywhere; }
.card img { width: 72px; height: 72px; image-rendering: pixelated; display: block; margin: 0 auto 2px; background: #f4f4f4; }
.query { border-color: #36c; width: 120px; }
.ok { border-color: #2a2; } .bad { border-color: #d22; }
.mark { font-weight: bold; } .ok .mark { color: #171; } .bad .mark { color: #b11; }
.meta { font-size: 12px; }
.note { color: #555; font-size: 12px; }
.dist { font-variant-numeric: tabular-nums; }
@media print {
  body { margin: 0; font-size: 10px; }
  .q { break-inside: avoid; flex-wrap: wrap; }
  .card { width: auto; min-width: 76px; white-space: nowrap; overflow-wrap: normal; font-size: 9px; }
}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Summary}}.</p>
<p class="note">Each row: the query (blue), then its {{.K}} nearest gallery items, nearest first, framed green and marked ✓ when of the query's class, red ✗ otherwise, with its distance to the query. AP@R is the query's term of MAP@R; class R@1 the mean R@1 of the queries of its class.</p>
{{define "query"}}<div class="q">
<div class="card query">{{if .Img}}<img src="{{.Img}}" alt="query {{.Row}}">{{end}}<div class="meta"><b>query {{.Row}}</b><br>class {{.Label}}<br>AP@R {{pct .APR}}<br>class R@1 {{pct .ClassR1}}<br>{{.Position}}</div></div>
{{range $i, $h := .Hits}}<div class="card {{if $h.Correct}}ok{{else}}bad{{end}}">{{if $h.Img}}<img src="{{$h.Img}}" alt="rank {{inc $i}}: row {{$h.Row}}">{{end}}<span class="mark">{{if $h.Correct}}✓{{else}}✗{{end}}</span> {{inc $i}}. {{$h.Label}}<br><span class="dist">{{$h.Dist}}</span></div>
{{end}}</div>
{{end}}
<h2>The {{.WorstCount}} worst queries (lowest AP@R)</h2>
{{range .Worst}}{{template "query" .}}{{end}}
<h2>{{.RandomCount}} random queries of {{.QueryCount}} (seed {{.RandomSeed}})</h2>
{{range .Random}}{{template "query" .}}{{end}}
</body>
</html>
`
