/*
 * heading_words.c - see heading_words.h; the table is documented in
 * docs/stories.md#the-words-of-a-tasks-heading.  To read another
 * language, add its words to hword_table with their class: nothing else
 * changes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "strategies/heading_words.h"

/* one word a line, as the table reads */
/* clang-format off */
static const struct {
	const char *word; /* lower case, words separated by one space */
	unsigned cls;
} hword_table[] = {
    /* English */
    {"task", HW_TASK},
    {"tasks", HW_TASK},
    {"subtask", HW_TASK},
    {"subtasks", HW_TASK},
    {"implementation", HW_IMPL},
    {"development", HW_IMPL},
    {"dev", HW_IMPL},
    {"plan", HW_PLAN},
    {"steps", HW_PLAN},
    {"list", HW_LIST},
    {"breakdown", HW_LIST},
    {"and", HW_AND},
    {"&", HW_AND},
    {"of", HW_FILL},
    {"the", HW_FILL},
    {"sub", HW_FILL},
    {"criteria", HW_CHECK},
    {"criterion", HW_CHECK},
    {"qa", HW_CHECK},
    {"dod", HW_CHECK},
    {"definition of done", HW_CHECK},
    /* Spanish */
    {"tarea", HW_TASK},
    {"tareas", HW_TASK},
    {"subtarea", HW_TASK},
    {"subtareas", HW_TASK},
    {"implementaci\xC3\xB3n", HW_IMPL},
    {"desarrollo", HW_IMPL},
    {"pasos", HW_PLAN},
    {"desglose", HW_LIST},
    {"lista", HW_LIST},
    {"y", HW_AND},
    {"de", HW_FILL},
    {"del", HW_FILL},
    {"la", HW_FILL},
    {"criterios", HW_CHECK},
    /* Portuguese */
    {"tarefa", HW_TASK},
    {"tarefas", HW_TASK},
    {"subtarefa", HW_TASK},
    {"subtarefas", HW_TASK},
    {"implementa\xC3\xA7\xC3\xA3o", HW_IMPL},
    {"implementacao", HW_IMPL},
    {"desenvolvimento", HW_IMPL},
    {"plano", HW_PLAN},
    {"passos", HW_PLAN},
    {"e", HW_AND},
    {"da", HW_FILL},
    {"do", HW_FILL},
    {"crit\xC3\xA9rios", HW_CHECK},
    /* French */
    {"t\xC3\xA2" "che", HW_TASK},
    {"t\xC3\xA2" "ches", HW_TASK},
    {"sous", HW_FILL},
    {"impl\xC3\xA9mentation", HW_IMPL},
    {"d\xC3\xA9veloppement", HW_IMPL},
    {"\xC3\xA9tapes", HW_PLAN},
    {"liste", HW_LIST},
    {"et", HW_AND},
    {"d", HW_FILL},
    {"des", HW_FILL},
    {"du", HW_FILL},
    {"crit\xC3\xA8res", HW_CHECK},
    /* German */
    {"aufgabe", HW_TASK},
    {"aufgaben", HW_TASK},
    {"teilaufgaben", HW_TASK},
    {"unteraufgaben", HW_TASK},
    {"implementierung", HW_IMPL},
    {"umsetzung", HW_IMPL},
    {"entwicklung", HW_IMPL},
    {"schritte", HW_PLAN},
    {"und", HW_AND},
    {"der", HW_FILL},
    {"akzeptanzkriterien", HW_CHECK},
    /* Italian */
    {"attivit\xC3\xA0", HW_TASK},
    {"compiti", HW_TASK},
    {"compito", HW_TASK},
    {"implementazione", HW_IMPL},
    {"sviluppo", HW_IMPL},
    {"piano", HW_PLAN},
    {"passi", HW_PLAN},
    {"elenco", HW_LIST},
    {"ed", HW_AND},
    {"di", HW_FILL},
    {"sotto", HW_FILL},
    {"criteri", HW_CHECK},
    /* Russian: задача, задачи, задач, подзадачи, реализация,
     * реализации, разработка, план, шаги, список, и, по, критерии */
    {"\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB0", HW_TASK},
    {"\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB8", HW_TASK},
    {"\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87", HW_TASK},
    {"\xD0\xBF\xD0\xBE\xD0\xB4\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB8", HW_TASK},
    {"\xD1\x80\xD0\xB5\xD0\xB0\xD0\xBB\xD0\xB8\xD0\xB7\xD0\xB0\xD1\x86\xD0\xB8\xD1\x8F", HW_IMPL},
    {"\xD1\x80\xD0\xB5\xD0\xB0\xD0\xBB\xD0\xB8\xD0\xB7\xD0\xB0\xD1\x86\xD0\xB8\xD0\xB8", HW_IMPL},
    {"\xD1\x80\xD0\xB0\xD0\xB7\xD1\x80\xD0\xB0\xD0\xB1\xD0\xBE\xD1\x82\xD0\xBA\xD0\xB0", HW_IMPL},
    {"\xD0\xBF\xD0\xBB\xD0\xB0\xD0\xBD", HW_PLAN},
    {"\xD1\x88\xD0\xB0\xD0\xB3\xD0\xB8", HW_PLAN},
    {"\xD1\x81\xD0\xBF\xD0\xB8\xD1\x81\xD0\xBE\xD0\xBA", HW_LIST},
    {"\xD0\xB8", HW_AND},
    {"\xD0\xBF\xD0\xBE", HW_FILL},
    {"\xD0\xBA\xD1\x80\xD0\xB8\xD1\x82\xD0\xB5\xD1\x80\xD0\xB8\xD0\xB8", HW_CHECK},
    /* Vietnamese: nhiệm vụ, công việc, triển khai, phát triển, kế
     * hoạch, các bước, danh sách, và, các, nghiệm thu, tiêu chí */
    {"nhi\xE1\xBB\x87m v\xE1\xBB\xA5", HW_TASK},
    {"c\xC3\xB4ng vi\xE1\xBB\x87" "c", HW_TASK},
    {"tri\xE1\xBB\x83n khai", HW_IMPL},
    {"ph\xC3\xA1t tri\xE1\xBB\x83n", HW_IMPL},
    {"k\xE1\xBA\xBF ho\xE1\xBA\xA1" "ch", HW_PLAN},
    {"c\xC3\xA1" "c b\xC6\xB0\xE1\xBB\x9B" "c", HW_PLAN},
    {"danh s\xC3\xA1" "ch", HW_LIST},
    {"v\xC3\xA0", HW_AND},
    {"c\xC3\xA1" "c", HW_FILL},
    {"nghi\xE1\xBB\x87m thu", HW_CHECK},
    {"ti\xC3\xAAu ch\xC3\xAD", HW_CHECK},
    /* Chinese, simplified and traditional: 任务, 子任务, 任務, 子任務,
     * 待办, 实施, 实现, 开发, 實作, 實施, 開發, 计划, 步骤, 列表, 清单,
     * 分解, 拆分, 清單, 和, 与, 及, 的, 验收, 驗收 */
    {"\xE4\xBB\xBB\xE5\x8A\xA1", HW_TASK},
    {"\xE5\xAD\x90\xE4\xBB\xBB\xE5\x8A\xA1", HW_TASK},
    {"\xE4\xBB\xBB\xE5\x8B\x99", HW_TASK},
    {"\xE5\xAD\x90\xE4\xBB\xBB\xE5\x8B\x99", HW_TASK},
    {"\xE5\xBE\x85\xE5\x8A\x9E", HW_TASK},
    {"\xE5\xAE\x9E\xE6\x96\xBD", HW_IMPL},
    {"\xE5\xAE\x9E\xE7\x8E\xB0", HW_IMPL},
    {"\xE5\xBC\x80\xE5\x8F\x91", HW_IMPL},
    {"\xE5\xAF\xA6\xE4\xBD\x9C", HW_IMPL},
    {"\xE5\xAF\xA6\xE6\x96\xBD", HW_IMPL},
    {"\xE9\x96\x8B\xE7\x99\xBC", HW_IMPL},
    {"\xE8\xAE\xA1\xE5\x88\x92", HW_PLAN},
    {"\xE6\xAD\xA5\xE9\xAA\xA4", HW_PLAN},
    {"\xE5\x88\x97\xE8\xA1\xA8", HW_LIST},
    {"\xE6\xB8\x85\xE5\x8D\x95", HW_LIST},
    {"\xE6\xB8\x85\xE5\x96\xAE", HW_LIST},
    {"\xE5\x88\x86\xE8\xA7\xA3", HW_LIST},
    {"\xE6\x8B\x86\xE5\x88\x86", HW_LIST},
    {"\xE5\x92\x8C", HW_AND},
    {"\xE4\xB8\x8E", HW_AND},
    {"\xE5\x8F\x8A", HW_AND},
    {"\xE7\x9A\x84", HW_FILL},
    {"\xE9\xAA\x8C\xE6\x94\xB6", HW_CHECK},
    {"\xE9\xA9\x97\xE6\x94\xB6", HW_CHECK},
    /* Japanese: タスク, サブタスク, 作業, 実装, 開発, 計画, 手順, 一覧,
     * リスト, と, の */
    {"\xE3\x82\xBF\xE3\x82\xB9\xE3\x82\xAF", HW_TASK},
    {"\xE3\x82\xB5\xE3\x83\x96\xE3\x82\xBF\xE3\x82\xB9\xE3\x82\xAF", HW_TASK},
    {"\xE4\xBD\x9C\xE6\xA5\xAD", HW_TASK},
    {"\xE5\xAE\x9F\xE8\xA3\x85", HW_IMPL},
    {"\xE9\x96\x8B\xE7\x99\xBA", HW_IMPL},
    {"\xE8\xA8\x88\xE7\x94\xBB", HW_PLAN},
    {"\xE6\x89\x8B\xE9\xA0\x86", HW_PLAN},
    {"\xE4\xB8\x80\xE8\xA6\xA7", HW_LIST},
    {"\xE3\x83\xAA\xE3\x82\xB9\xE3\x83\x88", HW_LIST},
    {"\xE3\x81\xA8", HW_AND},
    {"\xE3\x81\xAE", HW_FILL},
    /* Korean: 작업, 태스크, 하위, 할 일, 구현, 개발, 계획, 단계, 목록,
     * 리스트, 및, 수용 기준 */
    {"\xEC\x9E\x91\xEC\x97\x85", HW_TASK},
    {"\xED\x83\x9C\xEC\x8A\xA4\xED\x81\xAC", HW_TASK},
    {"\xED\x95\xA0 \xEC\x9D\xBC", HW_TASK},
    {"\xED\x95\x98\xEC\x9C\x84", HW_FILL},
    {"\xEA\xB5\xAC\xED\x98\x84", HW_IMPL},
    {"\xEA\xB0\x9C\xEB\xB0\x9C", HW_IMPL},
    {"\xEA\xB3\x84\xED\x9A\x8D", HW_PLAN},
    {"\xEB\x8B\xA8\xEA\xB3\x84", HW_PLAN},
    {"\xEB\xAA\xA9\xEB\xA1\x9D", HW_LIST},
    {"\xEB\xA6\xAC\xEC\x8A\xA4\xED\x8A\xB8", HW_LIST},
    {"\xEB\xB0\x8F", HW_AND},
    {"\xEC\x88\x98\xEC\x9A\xA9 \xEA\xB8\xB0\xEC\xA4\x80", HW_CHECK},
    /* added for issue 32's real stories: phases, checklists, the
     * phrases of acceptance criteria and done */
    {"checklist", HW_CHECKLIST}, /* checklist */
    {"phase", HW_PLAN}, /* phase */
    {"phases", HW_PLAN}, /* phases */
    {"fase", HW_PLAN}, /* fase */
    {"fases", HW_PLAN}, /* fases */
    {"phasen", HW_PLAN}, /* phasen */
    {"\xD1\x8D\xD1\x82\xD0\xB0\xD0\xBF\xD1\x8B", HW_PLAN}, /* этапы */
    {"\xD1\x84\xD0\xB0\xD0\xB7\xD1\x8B", HW_PLAN}, /* фазы */
    {"\xE9\x98\xB6\xE6\xAE\xB5", HW_PLAN}, /* 阶段 */
    {"\xE3\x83\x95\xE3\x82\xA7\xE3\x83\xBC\xE3\x82\xBA", HW_PLAN}, /* フェーズ */
    {"\xE9\xA0\x86\xE5\xBA\x8F", HW_PLAN}, /* 順序 */
    {"\xE9\xA1\xBA\xE5\xBA\x8F", HW_PLAN}, /* 顺序 */
    {"\xE5\xAE\x8C\xE6\x88\x90\xE5\xAE\x9A\xE4\xB9\x89", HW_CHECK}, /* 完成定义 */
    {"\xE5\xAE\x8C\xE6\x88\x90\xE6\xA0\x87\xE5\x87\x86", HW_CHECK}, /* 完成标准 */
    {"\xE6\xA3\x80\xE6\x9F\xA5\xE6\xB8\x85\xE5\x8D\x95", HW_CHECKLIST}, /* 检查清单 */
    {"\xE5\x8F\x97\xE3\x81\x91\xE5\x85\xA5\xE3\x82\x8C\xE5\x9F\xBA\xE6\xBA\x96", HW_CHECK}, /* 受け入れ基準 */
    {"\xE5\x8F\x97\xE5\x85\xA5\xE5\x9F\xBA\xE6\xBA\x96", HW_CHECK}, /* 受入基準 */
    {"\xE5\xAE\x8C\xE4\xBA\x86\xE6\x9D\xA1\xE4\xBB\xB6", HW_CHECK}, /* 完了条件 */
    {"\xE5\xAE\x8C\xE4\xBA\x86\xE3\x81\xAE\xE5\xAE\x9A\xE7\xBE\xA9", HW_CHECK}, /* 完了の定義 */
    {"\xE3\x83\x81\xE3\x82\xA7\xE3\x83\x83\xE3\x82\xAF\xE3\x83\xAA\xE3\x82\xB9\xE3\x83\x88", HW_CHECKLIST}, /* チェックリスト */
    {"\xEC\x9D\xB8\xEC\x88\x98 \xEA\xB8\xB0\xEC\xA4\x80", HW_CHECK}, /* 인수 기준 */
    {"\xEC\x99\x84\xEB\xA3\x8C \xEC\xA1\xB0\xEA\xB1\xB4", HW_CHECK}, /* 완료 조건 */
    {"\xEC\xB2\xB4\xED\x81\xAC\xEB\xA6\xAC\xEC\x8A\xA4\xED\x8A\xB8", HW_CHECKLIST}, /* 체크리스트 */
};
/* clang-format on */

#define NWORDS (sizeof(hword_table) / sizeof(*hword_table))

/* The code point at s[0..n) and its length in *k (1 for a byte that
 * starts no valid sequence: it reads as U+FFFD). */
static uint32_t
cp_decode(const unsigned char *s, size_t n, size_t *k)
{
	uint32_t c;
	size_t len, i;

	*k = 1;
	if (s[0] < 0x80)
		return s[0];
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2, c = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3, c = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4, c = s[0] & 0x07;
	else
		return 0xFFFD;
	if (len > n)
		return 0xFFFD;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0xFFFD;
		c = (c << 6) | (s[i] & 0x3F);
	}
	*k = len;
	return c;
}

static size_t
cp_encode(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xC0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xE0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		out[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	out[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

enum cp_kind { CP_SEP, CP_SPACED, CP_UNSPACED, CP_AND };

/* Letters of scripts written with spaces between words, of scripts
 * written without, "&" and "+", and everything else (a separator). */
static enum cp_kind
cp_kind(uint32_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return CP_SPACED;
	if (c == '&' || c == '+' || c == 0xFF06)
		return CP_AND;
	if (c == 0x30FB) /* katakana middle dot */
		return CP_SEP;
	if ((c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) ||
	    (c >= 0x300 && c <= 0x36F) || (c >= 0x370 && c <= 0x3FF) ||
	    (c >= 0x400 && c <= 0x52F) || (c >= 0x1E00 && c <= 0x1EFF))
		return CP_SPACED;
	if ((c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) ||
	    (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
	    (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) ||
	    (c >= 0x3130 && c <= 0x318F) || (c >= 0x20000 && c <= 0x2FFFF))
		return CP_UNSPACED;
	return CP_SEP;
}

/* Lower case of the capitals of the scripts in the table: ASCII,
 * Latin-1, Latin Extended-A and Additional (Vietnamese), Greek,
 * Cyrillic. */
static uint32_t
cp_lower(uint32_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c + 0x20;
	if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
		return c + 0x20;
	if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
		return c | 1;
	if (c >= 0x139 && c <= 0x148 && (c & 1))
		return c + 1;
	if (c >= 0x179 && c <= 0x17E && (c & 1))
		return c + 1;
	if (c == 0x178)
		return 0xFF;
	if (c == 0x1A0 || c == 0x1AF)
		return c + 1;
	if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2)
		return c + 0x20;
	if (c >= 0x410 && c <= 0x42F)
		return c + 0x20;
	if (c >= 0x400 && c <= 0x40F)
		return c + 0x50;
	if (c >= 0x1E00 && c <= 0x1EFF && !(c >= 0x1E96 && c <= 0x1E9F))
		return c | 1;
	return c;
}

void
hwords_split(char *out, size_t len, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	enum cp_kind prev = CP_SEP, kind;
	size_t i = 0, o = 0, k, w;
	bool brk, cut = false;
	char enc[4];
	uint32_t c;

	if (len == 0)
		return;
	while (i < n && u[i] != '\0') {
		c = cp_decode(u + i, n - i, &k);
		i += k;
		kind = cp_kind(c);
		if (kind == CP_SEP) {
			prev = CP_SEP;
			continue;
		}
		if (kind == CP_AND)
			c = '&';
		w = cp_encode(enc, cp_lower(c));
		/* a word break: after a separator, around "&", between
		 * a spaced and an unspaced script */
		brk = o > 0 && (prev != kind || kind == CP_AND);
		if (o + w + (brk ? 1 : 0) + 1 > len) {
			cut = !brk && o > 0;
			break;
		}
		if (brk)
			out[o++] = ' ';
		w = cp_encode(out + o, cp_lower(c));
		o += w;
		prev = kind;
	}
	/* a word cut short by len is dropped: half a word misreads */
	if (cut) {
		while (o > 0 && out[o - 1] != ' ')
			o--;
		while (o > 0 && out[o - 1] == ' ')
			o--;
	}
	out[o] = '\0';
}

/* Is the first code point of word of an unspaced script? */
static bool
word_unspaced(const char *word)
{
	size_t k;

	return cp_kind(cp_decode((const unsigned char *)word, strlen(word),
		   &k)) == CP_UNSPACED;
}

/* The longest table word of a class in mask that starts at s (a
 * spaced one ending at a word break), or -1; its length in *wlen. */
static int
word_at(const char *s, unsigned mask, size_t *wlen)
{
	size_t i, l, best_len = 0;
	int best = -1;

	for (i = 0; i < NWORDS; i++) {
		if (!(hword_table[i].cls & mask))
			continue;
		l = strlen(hword_table[i].word);
		if (l <= best_len || strncmp(s, hword_table[i].word, l) != 0)
			continue;
		/* a spaced word ends at a word break */
		if (!word_unspaced(hword_table[i].word) && s[l] != '\0' &&
		    s[l] != ' ')
			continue;
		best = (int)i;
		best_len = l;
	}
	*wlen = best_len;
	return best;
}

/* Is the number at s a whole word?  Its length, or 0. */
static size_t
number_at(const char *s)
{
	size_t l = 0;

	while (s[l] >= '0' && s[l] <= '9')
		l++;
	return l > 0 && (s[l] == '\0' || s[l] == ' ') ? l : 0;
}

/*
 * Can s be covered by table words?  *cls gets the
 * classes used.  Each position is tried with every word that matches
 * there, so "sub tasks" and "subtasks" both read; failed positions are
 * remembered (fail, one flag per byte of the words) so the cost stays
 * linear in the heading's length times the table.
 */
static bool
cover(const char *all, const char *s, unsigned *cls, unsigned char *fail)
{
	size_t i, l;

	while (*s == ' ')
		s++;
	if (*s == '\0')
		return true;
	if (fail[s - all])
		return false;
	for (i = 0; i < NWORDS; i++) {
		l = strlen(hword_table[i].word);
		if (strncmp(s, hword_table[i].word, l) != 0 ||
		    (!word_unspaced(hword_table[i].word) && s[l] != '\0' &&
			s[l] != ' ') ||
		    (hword_table[i].cls & HW_CHECK))
			continue;
		if (cover(all, s + l, cls, fail)) {
			*cls |= hword_table[i].cls;
			return true;
		}
	}
	fail[s - all] = 1;
	return false;
}

bool
hwords_name_tasks(const char *words)
{
	unsigned char fail[512];
	unsigned cls = 0;
	const char *s;

	if (strlen(words) >= sizeof(fail))
		return false;
	/* numbering before the name ("4 tasks"), not after it ("tasks 1
	 * 2" names tasks of a phase) */
	s = hwords_after_numbers(words);
	memset(fail, 0, sizeof(fail));
	if (*s == '\0' || !cover(words, s, &cls, fail))
		return false;
	return (cls & HW_TASK) || ((cls & HW_IMPL) && (cls & HW_PLAN));
}

const char *
hwords_after_numbers(const char *words)
{
	size_t l;

	while ((l = number_at(words)) > 0)
		words += l + (words[l] == ' ');
	return words;
}

bool
hwords_lead_tasks(const char *words)
{
	size_t l;
	const char *s = hwords_after_numbers(words);

	if (word_at(s, HW_TASK, &l) < 0)
		return false;
	s += l;
	while (*s == ' ')
		s++;
	return word_at(s, HW_AND, &l) >= 0;
}

/* Where the first word of a class in mask starts in words (a whole
 * word; in an unspaced script anywhere in a run), or -1. */
static long
word_find(const char *words, unsigned mask)
{
	const char *s, *hit;
	long best = -1;
	size_t l, i;

	for (s = words; *s != '\0'; s++)
		if ((s == words || s[-1] == ' ') && word_at(s, mask, &l) >= 0) {
			best = s - words;
			break;
		}
	for (i = 0; i < NWORDS; i++) {
		if (!(hword_table[i].cls & mask) ||
		    !word_unspaced(hword_table[i].word))
			continue;
		hit = strstr(words, hword_table[i].word);
		if (hit != NULL && (best < 0 || hit - words < best))
			best = hit - words;
	}
	return best;
}

bool
hwords_checklist(const char *words)
{
	long check = word_find(words, HW_CHECK),
	     task = word_find(words, HW_TASK);

	if (check >= 0 && (task < 0 || check < task))
		return true;
	return task < 0 && word_find(words, HW_CHECKLIST) >= 0;
}

bool
hwords_has(const char *words, unsigned mask)
{
	return word_find(words, mask) >= 0;
}

size_t
hwords_count(const char *words)
{
	size_t n = 0;
	const char *s;

	for (s = words; *s != '\0'; s++)
		if (*s != ' ' && (s == words || s[-1] == ' '))
			n++;
	return n;
}
