"""ttnn's config loaders: a dictionary's values converted to each attribute's type, an unknown key
refused (or, from a file, warned about and skipped); a JSON file that cannot be read is a warning."""

from __future__ import annotations

import json
import pathlib

import pytest

import meshnn as ttnn


@pytest.fixture
def restore():
    saved = {name: getattr(ttnn.CONFIG, name) for name in ("enable_model_cache", "tmp_dir", "comparison_mode_pcc")}
    yield
    for name, value in saved.items():
        setattr(ttnn.CONFIG, name, value)


def test_values_take_the_type_of_the_attribute(restore):
    ttnn.load_config_from_dictionary({"tmp_dir": "/tmp/elsewhere", "comparison_mode_pcc": 1, "enable_model_cache": 1})
    assert ttnn.CONFIG.tmp_dir == pathlib.Path("/tmp/elsewhere")
    assert ttnn.CONFIG.comparison_mode_pcc == 1.0 and isinstance(ttnn.CONFIG.comparison_mode_pcc, float)
    assert ttnn.CONFIG.enable_model_cache is True


def test_an_unknown_key_is_refused_before_or_warned_from_a_file(restore, tmp_path):
    with pytest.raises(ValueError, match="Unknown configuration key: no_such_key"):
        ttnn.load_config_from_dictionary({"no_such_key": 1})
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"no_such_key": 1, "enable_model_cache": True}))
    with pytest.warns(UserWarning, match="Unknown configuration key: no_such_key"):
        ttnn.load_config_from_json_file(path)
    assert ttnn.CONFIG.enable_model_cache is True


def test_a_file_that_cannot_be_loaded_is_a_warning(tmp_path):
    with pytest.warns(UserWarning, match="Failed to load ttnn configuration"):
        ttnn.load_config_from_json_file(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.warns(UserWarning, match="Failed to load ttnn configuration"):
        ttnn.load_config_from_json_file(str(tmp_path / "bad.json"))


def test_the_environment_variables_as_ttnn_reads_them():
    assert ttnn.CONFIG_PATH is None or isinstance(ttnn.CONFIG_PATH, pathlib.Path)
    assert ttnn.CONFIG_OVERRIDES is None or isinstance(ttnn.CONFIG_OVERRIDES, str)
