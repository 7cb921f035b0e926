"""NLTK data for the reference IF checkers: found in the project's folder, NLTK_DATA or a mirror's nltk_data/;
absent data is an error that names what is missing and where it was looked for (never a silent False)."""
from __future__ import annotations

import nltk
import pytest

from recipe.rewards import nltk_data


@pytest.fixture
def empty_search_path(empty_nltk_search_path):
    return empty_nltk_search_path


def test_missing_data_is_a_clear_error(empty_search_path):
    assert nltk_data.missing() == list(nltk_data.RESOURCES)
    with pytest.raises(nltk_data.NltkDataMissing, match="punkt_tab.*averaged_perceptron_tagger_eng.*stopwords") as e:
        nltk_data.ensure(download=False)
    assert str(empty_search_path / "project_nltk") in str(e.value)


def test_a_mirror_folder_and_nltk_data_are_searched(empty_search_path, shared_dir, monkeypatch):
    assert nltk_data.add_folder(empty_search_path / "absent") is False
    assert nltk_data.add_folder(shared_dir / "nltk_data") is True
    assert nltk_data.ensure(download=False) == []  # all found, nothing downloaded
    monkeypatch.setattr(nltk_data, "_EXTRA_FOLDERS", [])
    monkeypatch.setenv("NLTK_DATA", str(shared_dir / "nltk_data"))
    assert nltk_data.missing() == []
    assert nltk.data.path[0] == str(empty_search_path / "project_nltk")  # the project's folder is searched first


def test_a_checker_meeting_absent_data_raises_instead_of_refusing(monkeypatch):
    from recipe.rewards.reference_if import follows

    calls = []

    def needs_punkt(text):  # what a reference checker does when NLTK cannot find its data
        calls.append(text)
        if len(calls) == 1:
            raise LookupError("Resource punkt_tab not found.")
        return True

    monkeypatch.setattr(nltk_data, "ensure", lambda download=True: [])  # data fetched: the check is run again
    assert follows(needs_punkt, "One.") is True and len(calls) == 2

    def missing(download=True):
        raise nltk_data.NltkDataMissing("NLTK data ['punkt_tab'] not found")

    monkeypatch.setattr(nltk_data, "ensure", missing)
    with pytest.raises(nltk_data.NltkDataMissing):
        follows(lambda text: (_ for _ in ()).throw(LookupError("Resource punkt_tab not found.")), "One.")
