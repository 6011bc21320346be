"""Round-4 classes on real corpus specs: the current user's saved collections and follows as relation
tables (save / remove / check / list), the player as one record per service (play, pause, next, ...),
and no tool compiled as a create or list of a word that is no noun (`next`, `contain`, `me`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="the corpus of real specs is not here")


def _env(path: str, seed: int = 3) -> tuple[Environment, dict]:
    m = compile_spec(SPECS / path, "svc")
    return Environment([service_from_manifest(m)], seed=seed, size="small"), m


def _ops(m: dict) -> dict[str, dict]:
    return {t["original_name"]: t for t in m["tools"]}


def _ok(r: dict) -> object:
    assert r["success"], r
    return r["data"]


def _keys(env: Environment, m: dict, resource: str) -> list[str]:
    return sorted(env.services["svc"].table(m["resources"][resource]["table"]))


def _unsaved(env: Environment, m: dict, item: str, collection: str) -> list[str]:
    saved = set(_keys(env, m, collection))
    return [k for k in _keys(env, m, item) if k not in saved]


def test_saved_tracks_of_a_list_param_spec_save_check_remove_and_list() -> None:
    env, m = _env("corpus/klavis_spotify.json")
    ops = _ops(m)
    for name in (
        "spotify_save_tracks_for_current_user",
        "spotify_check_user_saved_tracks",
        "spotify_remove_user_saved_tracks",
        "spotify_get_user_saved_tracks",
    ):
        assert ops[name]["status"] == "compiled", (name, ops[name]["reason"])
        assert ops[name]["op"]["resource"] == "saved_track"
    a, b = _unsaved(env, m, "track", "saved_track")[:2]
    assert _ok(env.call("svc__spotify_check_user_saved_tracks", {"track_ids": [a, b]})) == [False, False]
    _ok(env.call("svc__spotify_save_tracks_for_current_user", {"track_ids": [a]}))
    assert _ok(env.call("svc__spotify_check_user_saved_tracks", {"track_ids": [b, a]})) == [False, True]
    listed = _ok(env.call("svc__spotify_get_user_saved_tracks", {"limit": 50}))["items"]
    assert a in {r["id"] for r in listed} and b not in {r["id"] for r in listed}
    _ok(env.call("svc__spotify_remove_user_saved_tracks", {"track_ids": [a]}))
    assert _ok(env.call("svc__spotify_check_user_saved_tracks", {"track_ids": [a]})) == [False]
    # an id of no track is a 404 that saves nothing
    before = env.state_hash()
    r = env.call("svc__spotify_save_tracks_for_current_user", {"track_ids": [a, "no-such-track"]})
    assert r["error"]["code"] == 404 and "no-such-track" in r["error"]["message"]
    assert env.state_hash() == before


def test_saved_collections_of_a_rest_spec_are_relations_not_a_made_up_resource() -> None:
    env, m = _env("corpus/openmcp_spotify.json")
    ops = _ops(m)
    for kind in ("tracks", "albums", "episodes", "shows", "audiobooks"):
        assert ops[f"check_users_saved_{kind}"]["op"]["kind"] == "check"
        assert ops[f"save_{kind}_user"]["op"]["kind"] == "save"  # never a create of `user`
        assert ops[f"remove_{kind}_user"]["op"]["kind"] == "unsave"
    a, b = _unsaved(env, m, "album", "saved_album")[:2]
    _ok(env.call("svc__save_albums_user", {"ids": f"{a},{b}", "b_ids": []}))
    assert _ok(env.call("svc__check_users_saved_albums", {"ids": f"{a},{b}"})) == [True, True]
    _ok(env.call("svc__remove_albums_user", {"ids": b}))
    assert _ok(env.call("svc__check_users_saved_albums", {"ids": f"{b},{a}"})) == [False, True]


def test_follows_are_a_relation_with_the_kind_followed() -> None:
    env, m = _env("corpus/openmcp_spotify.json")
    ops = _ops(m)
    assert ops["check_current_user_follows"]["status"] == "compiled"
    assert ops["check_if_user_follows_playlist"]["cause"] == "other_users_state"
    artist = _unsaved(env, m, "artist", "followed")[0]
    args = {"type": "artist", "ids": artist}
    assert _ok(env.call("svc__check_current_user_follows", args)) == [False]
    _ok(env.call("svc__follow_artists_users", {**args, "b_ids": []}))
    assert _ok(env.call("svc__check_current_user_follows", args)) == [True]
    followed = _ok(env.call("svc__get_followed", {"type": "artist", "limit": 50}))["items"]
    assert artist in {r["id"] for r in followed}
    _ok(env.call("svc__unfollow_artists_users", {**args, "b_ids": []}))
    assert _ok(env.call("svc__check_current_user_follows", args)) == [False]


def test_the_player_is_one_record_that_play_pause_next_change() -> None:
    env, m = _env("corpus/openmcp_spotify.json")
    ops = _ops(m)
    assert ops["skip_users_playback_to_next_track"]["op"]["kind"] == "player"
    state = _ok(env.call("svc__get_the_users_currently_playing_track", {}))
    queued = state["queue"][0]
    _ok(env.call("svc__pause_a_users_playback", {}))
    assert _ok(env.call("svc__get_the_users_currently_playing_track", {}))["is_playing"] is False
    track = _keys(env, m, "track")[-1]
    _ok(env.call("svc__start_a_users_playback", {"uris": [f"spotify:track:{track}"]}))
    now = _ok(env.call("svc__get_the_users_currently_playing_track", {}))
    assert now["is_playing"] is True and now["item"] == track
    _ok(env.call("svc__add_to_queue", {"uri": f"spotify:track:{track}"}))
    _ok(env.call("svc__skip_users_playback_to_next_track", {}))
    after = _ok(env.call("svc__get_the_users_currently_playing_track", {}))
    assert after["item"] == queued and after["history"][-1] == track
    _ok(env.call("svc__skip_users_playback_to_previous_track", {}))
    assert _ok(env.call("svc__get_the_users_currently_playing_track", {}))["item"] == track
    bad = env.call("svc__set_volume_for_users_playback", {"volume_percent": 140})
    assert bad["error"]["code"] == 400
    r = env.call("svc__start_a_users_playback", {"uris": ["spotify:track:no-such-track"]})
    assert r["error"]["code"] == 404


def test_a_player_without_rest_paths_and_its_queue() -> None:
    env, m = _env("corpus/docker_spotify.json")
    ops = _ops(m)
    for name in ("play", "pause", "next_track", "previous_track", "currently_playing", "set_volume"):
        assert ops[name]["status"] == "compiled" and ops[name]["op"]["kind"] == "player", name
    _ok(env.call("svc__play", {}))
    assert _ok(env.call("svc__currently_playing", {}))["is_playing"] is True
    _ok(env.call("svc__set_volume", {"volume_percent": 30}))
    q = _ok(env.call("svc__get_queue", {}))
    _ok(env.call("svc__next_track", {}))
    assert _ok(env.call("svc__currently_playing", {}))["item"] == q["queue"][0]
    assert _ok(env.call("svc__currently_playing", {}))["volume_percent"] == 30


def test_no_tool_is_a_create_or_list_of_a_word_that_is_no_noun() -> None:
    for path in ("corpus/openmcp_spotify.json", "corpus/klavis_spotify.json", "corpus/docker_spotify.json"):
        m = compile_spec(SPECS / path, "svc")
        for t in m["tools"]:
            r = t["op"].get("resource")
            assert r not in ("next", "previous", "contain", "me", "played", "current"), (path, t["name"])
            if t["op"]["kind"] == "create":
                assert r != "user" or "user" in t["name"].split("_")[:2], (path, t["name"])
    tools = _ops(compile_spec(SPECS / "corpus/openmcp_spotify.json", "svc"))
    # `DELETE /playlists/{id}/tracks` removes tracks: never a delete of the playlist
    assert tools["remove_tracks_playlist"]["cause"] == "removes_part_of_record"
    json.dumps(tools)  # the manifest stays data
