#!/bin/bash
# A batch larger than the flat layout's 200 stories (RENDER_FLAT_MAX): the
# state branch's paged layout in pages of 50 (RENDER_PAGE), a sound repository, every commit true, and
# the flat layout again for the next, small batch (docs/state-branch.md).
. "$(dirname "$0")/lib.sh"

P=$(new_repo)
mkdir -p "$P/docs/stories"
for i in $(seq -w 1 250); do
	printf '# Story s%s\n\n## Tasks\n\n- [ ] the only task\n' "$i" >"$P/docs/stories/s$i.md"
done
cat >"$T_TMP/sed.json" <<'JSON'
{"stories_glob": "docs/stories/*.md",
 "agents": {"primary": {"name": "sed",
   "command": ["sed", "-i", "s/^- \\[ \\]/- [x]/", "{story_file}"]}}}
JSON
cp "$T_TMP/sed.json" "$P/storyctl.json"
printf '.storyctl/\n' >"$P/.gitignore"
commit_all

run_sc -C "$P" run
expect_rc "250 one-task stories run to done" 0
expect_match "the summary counts them" "$T_OUT" 'batch 1: 250 done'

# tree_count REV:DIR: entries in a tree of the state branch
tree_count() { git -C "$P" ls-tree --name-only "$1" | wc -l; }
check "stories/0001/ holds the first page's 50 stories" [ "$(tree_count storyctl/state:stories/0001)" -eq 50 ]
check "stories/0005/ holds the last 50" [ "$(tree_count storyctl/state:stories/0005)" -eq 50 ]
check "stories/ holds only the five page directories" [ "$(tree_count storyctl/state:stories)" -eq 5 ]
check "progress/ holds the five pages" [ "$(tree_count storyctl/state:progress)" -eq 5 ]
check "a story's JSON on its page is its attempt history" bash -c \
	'git -C "$1" show storyctl/state:stories/0005/s250.json | jq -e ".id == \"s250\" and .status == \"done\" and (.attempts|length) == 1" >/dev/null' _ "$P"
check "no flat stories/<id>.json in a paged batch" \
	bash -c '! git -C "$1" cat-file -e storyctl/state:stories/s001.json 2>/dev/null' _ "$P"
check "progress.md is the summary of all 250" \
	bash -c 'git -C "$1" show storyctl/state:progress.md | grep -q "^| done | 250 |$"' _ "$P"
check "progress/0005.md lists stories 201-250, done" \
	bash -c '[ "$(git -C "$1" show storyctl/state:progress/0005.md | grep -c "^| s2[0-5][0-9] | done |")" -eq 50 ]' _ "$P"
check "progress/0005.md points to its stories directory" \
	bash -c 'git -C "$1" show storyctl/state:progress/0005.md | grep -q "stories/0005/"' _ "$P"
check "a commit per decision plus the batch's first" \
	[ "$(git -C "$P" rev-list --count storyctl/state)" -ge 251 ]

# every commit a person might check out is true: in the middle of the
# night the summary still counts 250 stories, and the page of the story
# the commit is about shows its decision
mid=$(git -C "$P" rev-list storyctl/state | sed -n 100p)
subj=$(git -C "$P" log -1 --format=%s "$mid")
id=${subj%%:*}
check "a commit in the middle counts every story" bash -c \
	'git -C "$1" show "$2:progress.md" | awk -F"|" "/^\\| [a-z]+ \\| [0-9]+ \\|\$/ {n += \$3} END {exit n != 250}"' _ "$P" "$mid"
check "that commit's story is done on its page ($id)" bash -c \
	'for p in 1 2 3 4 5; do git -C "$1" show "$2:progress/000$p.md"; done 2>/dev/null | grep -q "^| $3 | done |"' _ "$P" "$mid" "$id"

# 250 decisions write more than 2048 objects: storyctl packed them
# through libgit2 (docs/state-branch.md#packing), read-only as git
# writes packs, and git reads, checks and repacks the result
check "the branch's objects were packed" bash -c \
	'[ "$(git -C "$1" count-objects -v | sed -n "s/^packs: //p")" -ge 1 ]' _ "$P"
# and what the last decisions wrote, fewer than 2048 objects, is listed
# for the next batch's first pack (docs/state-branch.md#packing)
loose_of_branch() {
	comm -12 <(find "$1/.git/objects/"?? -type f 2>/dev/null | sed "s|.*/\(..\)/|\1|" | sort) \
		<(git -C "$1" rev-list --objects storyctl/state | cut -d" " -f1 | sort)
}
check "the batch's last objects are loose, fewer than 2048" bash -c \
	'n=$(wc -l <"$1/.git/storyctl/loose") && [ "$n" -gt 0 ] && [ "$n" -lt 2048 ]' _ "$P"
check "every object of the branch left loose is listed for the next batch" bash -c \
	'[ -z "$(comm -23 "$2" <(cut -c1-40 "$1/.git/storyctl/loose" | sort))" ]' _ "$P" <(loose_of_branch "$P")
want_mode=$(printf '%o' $((0444 & ~0$(umask))))
check "packs and indexes are mode $want_mode (0444 less the umask)" bash -c \
	'for f in "$1"/.git/objects/pack/pack-*; do [ "$(stat -c %a "$f")" = "$2" ] || exit 1; done' _ "$P" "$want_mode"
check "git fsck finds the repository sound" git -C "$P" fsck --strict --no-progress
check "git gc works on it" git -C "$P" gc -q
check "after git gc: one pack, nothing loose, the branch reads" bash -c \
	'git -C "$1" count-objects -v | grep -qx "packs: 1" && git -C "$1" count-objects -v | grep -qx "count: 0" && git -C "$1" show storyctl/state:stories/0005/s250.json | jq -e ".status == \"done\"" >/dev/null' _ "$P"
check "git fsck after git gc" git -C "$P" fsck --strict --no-progress
check "the work tree is only the checked boxes, HEAD untouched" bash -c \
	'[ -z "$(git -C "$1" status --porcelain | grep -v "^ M docs/stories/s[0-9]*.md$")" ] && [ "$(git -C "$1" rev-parse --abbrev-ref HEAD)" = main ]' _ "$P"

# a small batch afterwards: the flat layout, with nothing of the last one
jq '{"stories": ["docs/stories/s001.md", "docs/stories/s002.md"], "agents": .agents}' \
	"$P/storyctl.json" >"$P/storyctl.json.new" && mv "$P/storyctl.json.new" "$P/storyctl.json"
run_sc -C "$P" run
expect_rc "a small batch after the large one" 0
# git gc packed what the large batch listed: the small batch passed
# over those and lists only its own objects, all of them loose
check "the next batch lists only what is still loose" bash -c \
	'n=0; while read -r id _; do [ -f "$1/.git/objects/${id:0:2}/${id:2}" ] || exit 1; n=$((n + 1)); done <"$1/.git/storyctl/loose"; [ "$n" -gt 0 ] && [ "$n" -lt 100 ]' _ "$P"
check "the small batch has flat stories/<id>.json" bash -c \
	'git -C "$1" show storyctl/state:stories/s001.json | jq -e ".id == \"s001\"" >/dev/null' _ "$P"
check "and only its own files" bash -c \
	'[ "$(git -C "$1" ls-tree -r --name-only storyctl/state | sort | tr "\n" " ")" = "progress.md stories/s001.json stories/s002.json " ]' _ "$P"
check "the large batch stays in the history" bash -c \
	'git -C "$1" log --format=%s storyctl/state | grep -q "^s250: attempt 1"' _ "$P"
# ---- group commit: one fsync of the database per decision ----
# A decision's transaction has no fsync of its own; the next attempt's
# durable start syncs both (docs/performance.md).  Counted with strace:
# fsyncs of the write-ahead log for 20 one-attempt stories.
if command -v strace >/dev/null 2>&1; then
	P=$(new_repo)
	mkdir -p "$P/docs/stories"
	for i in $(seq -w 1 20); do
		printf '# Story g%s\n\n## Tasks\n\n- [ ] the only task\n' "$i" >"$P/docs/stories/g$i.md"
	done
	cp "$T_TMP/sed.json" "$P/storyctl.json"
	printf '.storyctl/\n' >"$P/.gitignore"
	commit_all
	# (LeakSanitizer cannot run under ptrace: off for this one run)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -y -e trace=fsync,fdatasync -o "$T_TMP/strace" \
		"$STORYCTL" -C "$P" run >"$T_TMP/out" 2>"$T_TMP/err"
	T_RC=$?
	T_OUT=$(cat "$T_TMP/out")
	T_ERR=$(cat "$T_TMP/err")
	expect_rc "20 stories under strace" 0
	syncs=$(grep -c 'state\.db-wal>' "$T_TMP/strace")
	# 20 attempt starts + about 10 for the batch's start and end; two
	# per decision would be 50
	check "one log fsync per decision, plus the batch's own ($syncs for 20)" \
		test "$syncs" -ge 20 -a "$syncs" -le 34
	check "every decision is on the branch" \
		[ "$(git -C "$P" log --format=%s storyctl/state | grep -c '^g[0-9]*: attempt 1 (primary sed) success -> done$')" -eq 20 ]
else
	ok "# skip: no strace"
fi
finish
