/* tsvg.c: the merged trace as an SVG timeline, one row per rank: where the job waited, at a glance, in any browser.
 *
 * The same events as the merged JSON (tmerge.c), so the picture and the
 * trace cannot disagree: a bar per wait, coloured by kind, a grey bar per
 * source's CMD, the rows grouped by node, a time axis with round ticks.
 * Each bar carries a <title> (its name, generation and length), which a
 * browser shows on hover; bars under a quarter of a pixel are counted, not
 * drawn.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kind.h"
#include "tmerge.h"

#define LEFT	150	/* px for the row labels */
#define WIDTH	1000	/* px for the time */
#define ROW	16
#define TOP	40

static const char *
colour(const struct ac_tev *e)
{
	if (e->cmd)
		return "#9e9e9e";
	switch (e->key[0]) {
	case 'b': return "#4c78a8";	/* barrier */
	case 'c': return "#54a24b";	/* broadcast */
	case 'w': return "#f58518";	/* --wait */
	case 'm': return "#e45756";	/* main-first */
	default: return "#b279a2";	/* check */
	}
}

/*
 * S as XML text: a key comes from a node file anyone in the trace directory
 * could have written ('<script>' in one landed in the SVG as an element).
 * The merge takes only UTF-8 lines, so what is left is XML's five
 * characters, and a character XML 1.0 has no place for (a control byte,
 * U+FFFE, U+FFFF), written as '?'.
 */
static void
xml_put(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else if (*p == '\'')
			fputs("&apos;", f);
		else if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
			putc('?', f);
		else if (*p == 0xef && p[1] == 0xbf && (p[2] == 0xbe ||
		    p[2] == 0xbf)) {
			putc('?', f);
			p += 2;
		} else
			putc(*p, f);
}

/* A round tick step (1, 2 or 5 times a power of ten us) for SPAN us. */
static int64_t
tick_step(int64_t span)
{
	static const int m[] = { 1, 2, 5 };

	for (int64_t p = 1; p < INT64_MAX / 10; p *= 10)
		for (int i = 0; i < 3; i++)
			if (span / (m[i] * p) <= 10)
				return m[i] * p;
	return span;
}

static void
tick_label(char *buf, size_t len, int64_t us, int64_t step)
{
	if (step >= 1000000)
		snprintf(buf, len, "%.0fs", (double)us / 1e6);
	else if (step >= 1000)
		snprintf(buf, len, "%.0fms", (double)us / 1e3);
	else
		snprintf(buf, len, "%" PRId64 "us", us);
}

int
ac_tsvg_write(FILE *f, const struct ac_tev *ev, size_t n, const char *job)
{
	int64_t end = 1, step;
	size_t rows = 0, hidden = 0;
	long pid = -1;
	long long tid = -1;
	double scale;
	int height;

	for (size_t i = 0; i < n; i++)
		if (ev[i].ph == 'X') {
			if (ev[i].ts + ev[i].dur > end)
				end = ev[i].ts + ev[i].dur;
			if (ev[i].pid != pid || ev[i].tid != tid)
				rows++;
			pid = ev[i].pid;
			tid = ev[i].tid;
		}
	scale = (double)WIDTH / (double)end;
	height = TOP + (int)rows * ROW + 30;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	    "<text x=\"4\" y=\"16\" font-size=\"13\">accelctl trace of job ",
	    LEFT + WIDTH + 20, height);
	xml_put(f, job);
	fprintf(f, ": waits by rank (barrier blue, broadcast green, --wait "
	    "orange, main-first red, CMD grey)</text>\n");
	step = tick_step(end);
	for (int64_t t = 0; t <= end; t += step) {
		char lab[32];
		double x = LEFT + (double)t * scale;

		tick_label(lab, sizeof(lab), t, step);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
		    "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" fill=\"#555\">%s"
		    "</text>\n", x, TOP - 6, x, TOP + (int)rows * ROW, x + 2,
		    TOP + (int)rows * ROW + 14, lab);
	}
	pid = -1;
	tid = -1;
	rows = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ac_tev *e = &ev[i];
		double x, w;
		int y;

		if (e->ph != 'X')
			continue;
		if (e->pid != pid || e->tid != tid) {
			y = TOP + (int)rows * ROW;
			if (e->pid != pid && rows > 0)
				fprintf(f, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
				    "stroke=\"#999\"/>\n", y, LEFT + WIDTH, y);
			fprintf(f, "<text x=\"4\" y=\"%d\">node %ld rank %lld</text>\n",
			    y + ROW - 4, e->pid, e->tid);
			pid = e->pid;
			tid = e->tid;
			rows++;
		}
		y = TOP + (int)(rows - 1) * ROW;
		x = LEFT + (double)e->ts * scale;
		w = (double)e->dur * scale;
		/* Under a quarter of a pixel: not to be seen, and a long job's
		 * thousands of them made a picture of tens of MB. */
		if (w < 0.25) {
			hidden++;
			continue;
		}
		/* A pixel's gap between bars wide enough: one wait after
		 * another on a rank must not look like one long one. */
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		    "fill=\"%s\"><title>%s", x, y + 2, w < 0.5 ? 0.5 : w > 3 ?
		    w - 1 : w, ROW - 4, colour(e), e->cmd ? "CMD of " : "");
		xml_put(f, e->key);
		fprintf(f, " generation %lld: %.3f ms</title></rect>\n", e->gen,
		    (double)e->dur / 1e3);
		/* Its name inside, where it fits (about 6 px a character):
		 * the key's part after its kind, "" for a key without one (a
		 * key of one character ended before "b:"). */
		if (w > 6.0 * (double)(strlen(e->key) + 4)) {
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" fill=\"white\" "
			    "font-size=\"10\">%s", x + 3, y + ROW - 5, e->cmd ?
			    "CMD " : "");
			xml_put(f, ac_kind_label(e->key));
			fprintf(f, " %lld</text>\n", e->gen);
		}
	}
	if (hidden > 0)
		fprintf(f, "<text x=\"4\" y=\"%d\" fill=\"#555\">%zu waits too "
		    "short to draw at this scale (the trace has them)</text>\n",
		    height - 4, hidden);
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
