"""The HTML representation links every sklmn estimator to its API page."""

import pytest
from sklearn.utils import estimator_html_repr

import sklmn
from sklmn import LAESTransformer, LMNClassifier, SequenceStandardScaler
from sklmn.preprocessing import SequenceReshaper
from sklmn.pretraining import UnrolledPretrainer
from sklmn.utils import _doc_link


@pytest.mark.parametrize(
    "estimator, page",
    [
        (LMNClassifier(), "sklmn.estimators.LMNClassifier"),
        (LAESTransformer(), "sklmn.laes.LAESTransformer"),
        (UnrolledPretrainer(), "sklmn.pretraining.UnrolledPretrainer"),
        (SequenceStandardScaler(), "sklmn.preprocessing.SequenceStandardScaler"),
        (SequenceReshaper(), "sklmn.preprocessing.SequenceReshaper"),
    ],
)
def test_link_from_the_environment(estimator, page, monkeypatch):
    monkeypatch.setenv("SKLMN_DOCS_URL", "https://docs.example/sklmn/")
    url = f"https://docs.example/sklmn/api/generated/{page}.html"
    assert estimator._get_doc_link() == url
    assert url in estimator_html_repr(estimator)


def test_local_build_or_no_link(monkeypatch, tmp_path):
    monkeypatch.delenv("SKLMN_DOCS_URL", raising=False)
    monkeypatch.setattr(_doc_link, "_LOCAL_BUILD", tmp_path)
    assert LMNClassifier()._get_doc_link() == ""  # no site known: no link
    (tmp_path / "index.html").write_text("<html></html>")
    page = "api/generated/sklmn.estimators.LMNClassifier.html"
    assert LMNClassifier()._get_doc_link() == f"{tmp_path.as_uri()}/{page}"


def test_every_public_estimator_has_a_link(monkeypatch):
    from sklearn.base import BaseEstimator

    monkeypatch.setenv("SKLMN_DOCS_URL", "https://docs.example")
    for name in sklmn.__all__:
        obj = getattr(sklmn, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            assert obj()._get_doc_link().endswith(f".{name}.html"), name


def test_template_can_be_overridden_per_instance(monkeypatch):
    monkeypatch.setenv("SKLMN_DOCS_URL", "https://docs.example")
    est = LMNClassifier()
    est._doc_link_template = "https://elsewhere/{estimator_name}"
    assert est._get_doc_link() == "https://elsewhere/LMNClassifier"
    assert LMNClassifier()._get_doc_link().startswith("https://docs.example/")
