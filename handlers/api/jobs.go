package api

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/codes"

	"github.com/gin-gonic/gin"
)

// maxIssueBody bounds an issue request: 100,000 user ids of up to 64
// characters, quoted and separated.
const maxIssueBody = 8 << 20

type generateRequest struct {
	Count   *int64 `json:"count" binding:"required" schema:"generate_count" doc:"how many codes, 1..1,000,000"`
	Pattern string `json:"pattern" schema:"code_pattern" doc:"optional, e.g. SPRING-####-####: # is a random code character, letters and digits are kept, dashes are for reading (not stored); at least 40 bits of randomness (8 #)"`
}

type issueRequest struct {
	UserIDs []string `json:"user_ids" binding:"required" schema:"issue_user_ids" doc:"1 to 100,000 user ids; a user listed twice gets one coupon"`
}

// jobView is a job as the API shows it, with where its result is.
type jobView struct {
	models.Job
	ResultURL string `json:"result_url" doc:"the job's result CSV (grows while the job runs)"`
}

// jobAnswer is the payload of every job answer: the job, and its figures at
// the top level.
type jobAnswer struct {
	Job       jobView `json:"job"`
	State     string  `json:"state" doc:"queued, running, done or failed"`
	Done      int64   `json:"done" doc:"rows processed (made or refused)"`
	Total     int64   `json:"total"`
	Errors    int64   `json:"errors" doc:"rows refused; their reasons are in the result CSV"`
	ResultURL string  `json:"result_url"`
}

func answerJob(j *models.Job) jobAnswer {
	v := jobView{Job: *j, ResultURL: "/api/v1/jobs/" + strconv.FormatInt(j.ID, 10) + "/result.csv"}
	return jobAnswer{Job: v, State: j.State, Done: j.Done, Total: j.Total, Errors: j.Errors, ResultURL: v.ResultURL}
}

// generateCodes queues a job making bearer codes: 202 with the job.
func (s *Server) generateCodes(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req generateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	j, err := s.codes.StartGenerate(c.Request.Context(), web.Principal(c).Name, id, *req.Count, req.Pattern)
	respondJob(c, http.StatusAccepted, j, err)
}

// importCodes queues a job importing the codes of a CSV upload: 202 with
// the job, whose result lists the refused rows.
func (s *Server) importCodes(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if !isCSV(c) {
		web.RespondError(c, web.WithStatus(http.StatusUnsupportedMediaType, models.Invalid("Content-Type", "must be text/csv")))
		return
	}
	j, err := readUpload(c, codes.MaxImportBytes, func(file io.Reader) (*models.Job, error) {
		return s.codes.StartImport(c.Request.Context(), web.Principal(c).Name, id, file)
	})
	respondJob(c, http.StatusAccepted, j, err)
}

// issueCoupons queues a job giving each listed user a coupon: the list is
// JSON {user_ids} or a CSV upload. 202 with the job.
func (s *Server) issueCoupons(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var users []string
	if isCSV(c) {
		list, err := readUpload(c, maxIssueBody, codes.ParseUserList)
		if err != nil {
			web.RespondError(c, err)
			return
		}
		users = list
	} else {
		var req issueRequest
		if err := web.DecodeJSONLimit(c.Request, &req, maxIssueBody); err != nil {
			var e *models.Error
			if errors.As(err, &e) && e.Field == "Content-Type" {
				err = web.WithStatus(http.StatusUnsupportedMediaType, models.Invalid("Content-Type", "must be application/json or text/csv"))
			}
			web.RespondError(c, err)
			return
		}
		users = req.UserIDs
	}
	j, err := s.codes.StartIssue(c.Request.Context(), web.Principal(c).Name, id, users)
	respondJob(c, http.StatusAccepted, j, err)
}

// respondJob answers the job with status, or the error.
func respondJob(c *gin.Context, status int, j *models.Job, err error) {
	if err != nil {
		web.RespondError(c, err)
		return
	}
	web.Respond(c, status, "ok", answerJob(j))
}

// readUpload hands the request body to read, answering 413 naming file
// when the body is cut at limit, the route's bound.
func readUpload[T any](c *gin.Context, limit int64, read func(io.Reader) (T, error)) (T, error) {
	body := &cutReader{r: c.Request.Body}
	v, err := read(body)
	if body.cut {
		err = web.WithStatus(http.StatusRequestEntityTooLarge, models.Invalid("file", "is larger than %d MiB", limit>>20))
	}
	return v, err
}

// getJob answers a job's state and progress.
func (s *Server) getJob(c *gin.Context) {
	if j, ok := s.pathJob(c); ok {
		respondJob(c, http.StatusOK, j, nil)
	}
}

// pathJob reads the job the path names (:id); ok false when it answered
// the error instead (a malformed id, no such job, a backend down).
func (s *Server) pathJob(c *gin.Context) (*models.Job, bool) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return nil, false
	}
	j, err := s.codes.GetJob(c.Request.Context(), id)
	if err != nil {
		web.RespondError(c, err)
		return nil, false
	}
	return j, true
}

// downloadJobResult streams a job's result CSV.
func (s *Server) downloadJobResult(c *gin.Context) {
	j, ok := s.pathJob(c)
	if !ok {
		return
	}
	id := j.ID
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+codes.JobResultName(j)+`"`)
	c.Status(http.StatusOK)
	if err := s.codes.WriteJobResult(c.Request.Context(), id, c.Writer); err != nil {
		s.log.Warn("job result cut", "job", id, "err", err)
	}
}

// exportCoupons streams a template's coupons as CSV.
func (s *Server) exportCoupons(c *gin.Context) {
	id, f, ok := couponsQuery(c)
	if !ok {
		return
	}
	if err := s.codes.CheckExport(c.Request.Context(), id, f); err != nil {
		web.RespondError(c, err)
		return
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="template-`+strconv.FormatInt(id, 10)+`-coupons.csv"`)
	c.Status(http.StatusOK)
	if _, err := s.codes.ExportCoupons(c.Request.Context(), id, f, c.Writer); err != nil {
		if !c.Writer.Written() {
			// Nothing sent yet, not even the header row: the error is the answer.
			web.RespondError(c, err)
			return
		}
		// A client must not take a cut file for a whole one (docs/jobs.md).
		s.log.Warn("export cut", "template", id, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// couponsQuery reads the template id and the status, from and to of a
// template's coupons, answering 400 naming the one at fault.
func couponsQuery(c *gin.Context) (int64, codes.ExportFilter, bool) {
	f := codes.ExportFilter{Status: c.Query("status")}
	id, ok := web.PathID(c, "id")
	if !ok {
		return 0, f, false
	}
	for _, q := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := c.Query(q.name); v != "" {
			t, err := models.ParseTime(q.name, v)
			if err != nil {
				web.RespondError(c, err)
				return 0, f, false
			}
			*q.dst = t
		}
	}
	return id, f, true
}

// listTemplateCoupons answers a cursor page of a template's coupons, in
// increasing id, that the filter keeps (docs/paging.md).
func (s *Server) listTemplateCoupons(c *gin.Context) {
	id, f, ok := couponsQuery(c)
	if !ok {
		return
	}
	after, limit, ok := pageQuery(c)
	if !ok {
		return
	}
	page, next, err := s.codes.ListCoupons(c.Request.Context(), id, f, after, limit)
	web.Answer(c, err, http.StatusOK, "ok", couponsAnswer{Coupons: page, Next: Next{next}})
}

// isCSV reports a text/csv request body.
func isCSV(c *gin.Context) bool {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	return err == nil && mt == "text/csv"
}

// cutReader notes that the body was cut at the route's limit.
type cutReader struct {
	r   io.Reader
	cut bool
}

func (r *cutReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && web.BodyTooLarge(err) {
		r.cut = true
	}
	return n, err
}
